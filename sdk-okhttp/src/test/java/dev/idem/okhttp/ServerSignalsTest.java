package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.assertKeyOnEveryRequest;
import static dev.idem.okhttp.Fixture.client;
import static dev.idem.okhttp.Fixture.keysSent;
import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classifier;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationState;
import dev.idem.core.ProtocolStatuses;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Header name and format, and the server's signals, through a real OkHttpClient. */
class ServerSignalsTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  IdempotentServer server() {
    return serverExtension.server();
  }

  @Test
  void headerNameIsConfigurable() throws Exception {
    try (IdempotentServer server = IdempotentServer.builder().keyHeader("X-Request-Key").start()) {
      server.plan().next(Fault.status(503));
      IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().build()).headerName("X-Request-Key").build();
      IdempotentOperation op = IdempotentOperation.of("create-order");
      try (Response r = client(idem).newCall(order(server.url("/orders"), op)).execute()) {
        assertEquals(201, r.code());
      }
      assertKeyOnEveryRequest(server, op.key().value(), 2);
      server.recordedRequests().forEach(req -> assertEquals(Optional.empty(), req.header("Idempotency-Key")));
      assertEquals(1, server.effectCount(op.key().value()));
    }
  }

  @Test
  void keyIsBareByDefaultAndQuotedAsAStructuredFieldStringOnRequest() throws Exception {
    IdempotentOperation bare = IdempotentOperation.of("create-order");
    try (Response r = client(f.idem()).newCall(order(server().url("/orders"), bare)).execute()) {
      assertEquals(201, r.code());
    }
    IdempotentOperation quoted = IdempotentOperation.of("create-order");
    IdemOkHttp sf = IdemOkHttp.builder(f.executorBuilder().build()).keyFormat(KeyHeaderFormat.STRUCTURED_STRING)
        .build();
    try (Response r = client(sf).newCall(order(server().url("/orders"), quoted)).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(List.of(Optional.of(bare.key().value()), Optional.of("\"" + quoted.key().value() + "\"")),
        keysSent(server()));
  }

  // The server expects Idempotency-Key; the client sends its key under another name.
  @Test
  void missingKey400IsAThrownConfigurationError() throws Exception {
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().build()).headerName("X-Wrong-Name").build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    OperationFailedException e = assertThrows(OperationFailedException.class,
        () -> client(idem).newCall(order(server().url("/orders"), op)).execute());
    assertTrue(e.getMessage().contains("X-Wrong-Name"), e.getMessage());
    assertEquals(400, e.lastResponse().orElseThrow().status());
    assertEquals(OperationState.FAILED, f.record(op).state());
    assertEquals(1, server().requestCount(), "a configuration error is not retried");
    assertEquals(0, server().totalEffects());
  }

  @Test
  void garbageRetryAfterIsIgnoredAndBackoffApplies() throws Exception {
    server().plan().next(Fault.status(503).withHeader("Retry-After", "soon-ish, maybe"));
    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (Response r = client(f.idem()).newCall(order(server().url("/orders"), op)).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(List.of(Duration.ofMillis(100)), f.time.sleeps(), "plain jittered backoff, no hint");
    assertEquals(1, server().effectCount(op.key().value()));
  }

  @Test
  void shouldRetryHintOverridesTheClassifierBothWays() throws Exception {
    server().plan().next(Fault.status(400).withHeader("X-Should-Retry", "true"));
    IdempotentExecutor executor = f.executorBuilder()
        .classifier(Classifier.shouldRetryHeader("X-Should-Retry").orElse(Classifier.defaults())).build();
    OkHttpClient client = client(IdemOkHttp.builder(executor).build());
    IdempotentOperation retried = IdempotentOperation.of("create-order");
    try (Response r = client.newCall(order(server().url("/orders"), retried)).execute()) {
      assertEquals(201, r.code(), "a 400 with X-Should-Retry: true was retried");
    }
    assertEquals(1, server().effectCount(retried.key().value()));

    server().plan().next(Fault.status(503).withHeader("X-Should-Retry", "false"));
    IdempotentOperation notRetried = IdempotentOperation.of("create-order");
    try (Response r = client.newCall(order(server().url("/orders"), notRetried)).execute()) {
      assertEquals(503, r.code(), "a 503 with X-Should-Retry: false is final, and returned as is");
    }
    assertEquals(OperationState.FAILED, f.record(notRetried).state());
    assertEquals(3, server().requestCount());
    assertEquals(0, server().effectCount(notRetried.key().value()));
  }

  // A server that answers 417 to a key reused with another payload, declared with the preset.
  @Test
  void a417OnReuseWithThePresetThrowsKeyReusedOnEveryCall() throws Exception {
    List<IdemEvent> events = new CopyOnWriteArrayList<>();
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().protocol(ProtocolStatuses.reuseAs417())
        .listener(events::add).build()).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server().plan().next(Fault.status(417));
    Request request = order(server().url("/orders"), op);

    IdempotencyKeyReusedException live = assertThrows(IdempotencyKeyReusedException.class,
        () -> client(idem).newCall(request).execute());
    IdempotencyKeyReusedException again = assertThrows(IdempotencyKeyReusedException.class,
        () -> client(idem).newCall(request).execute());

    assertTrue(live.detectedByServer() && again.detectedByServer());
    assertEquals(1, server().requestCount(), "417 is not retried, and the second call sends nothing");
    assertEquals(0, server().totalEffects());
    assertEquals(OperationState.FAILED, f.record(op).state());
    assertEquals(2, events.stream().filter(e -> e.equals(new IdemEvent.KeyMismatch(op.id(), true))).count());
  }

  @Test
  void aFailedAnswerReturnedAgainFromTheJournalSaysNothingWasSent() throws Exception {
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server().plan().next(Fault.status(404));
    Request request = order(server().url("/orders"), op);
    try (Response first = client(f.idem()).newCall(request).execute()) {
      assertEquals(404, first.code());
      assertFalse(IdempotencyResult.of(first).orElseThrow().fromJournal());
    }
    try (Response again = client(f.idem()).newCall(request).execute()) {
      assertEquals(404, again.code());
      assertTrue(IdempotencyResult.of(again).orElseThrow().fromJournal());
    }
    assertEquals(1, server().requestCount());
  }

  @Test
  void a409WithoutRetryAfterWaitsAtLeastASecondGrowing() throws Exception {
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server().plan().forNext(2, Fault.status(409));
    try (Response r = client(f.idem()).newCall(order(server().url("/orders"), op)).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(List.of(Duration.ofSeconds(1), Duration.ofSeconds(2)), f.time.sleeps());
    assertKeyOnEveryRequest(server(), op.key().value(), 3);
    assertEquals(1, server().effectCount(op.key().value()));
  }
}
