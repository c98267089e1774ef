package dev.idem.okhttp;

import dev.idem.core.KeyHeaderFormat;
import static dev.idem.okhttp.KeyedServer.Fault.BAD_REQUEST_400_SHOULD_RETRY;
import static dev.idem.okhttp.KeyedServer.Fault.UNAVAILABLE_503_GARBAGE_RETRY_AFTER;
import static dev.idem.okhttp.KeyedServer.Fault.UNAVAILABLE_503_SHOULD_NOT_RETRY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classifier;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationState;
import dev.idem.testkit.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Header name and format, and the server's signals, through a real OkHttpClient. */
class ServerSignalsTest {
  static final MediaType JSON = MediaType.get("application/json");

  final VirtualTime time = new VirtualTime();
  final InMemoryJournal journal = new InMemoryJournal();
  KeyedServer server;

  @AfterEach
  void tearDown() {
    if (server != null) {
      server.close();
    }
  }

  IdempotentExecutor.Builder executorBuilder() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).random(() -> 0.5);
  }

  static OkHttpClient client(IdemOkHttp idem) {
    return new OkHttpClient.Builder().addInterceptor(idem.interceptor()).retryOnConnectionFailure(false).build();
  }

  Request order(IdempotentOperation op) {
    return new Request.Builder().url(server.url("/orders")).post(RequestBody.create("{\"qty\":1}", JSON))
        .tag(IdempotentOperation.class, op).build();
  }

  @Test
  void headerNameIsConfigurable() throws Exception {
    server = new KeyedServer("X-Request-Key").then(KeyedServer.Fault.UNAVAILABLE_503);
    IdemOkHttp idem = IdemOkHttp.builder(executorBuilder().build()).headerName("X-Request-Key").build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (Response r = client(idem).newCall(order(op)).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(List.of(op.key().value(), op.key().value()), server.keysSent());
    server.requests().forEach(req -> assertNull(req.getHeaders().get("Idempotency-Key")));
    assertEquals(1, server.effects(op.key().value()));
  }

  @Test
  void keyIsBareByDefaultAndQuotedAsAStructuredFieldStringOnRequest() throws Exception {
    server = new KeyedServer();
    IdempotentOperation bare = IdempotentOperation.of("create-order");
    try (Response r = client(IdemOkHttp.builder(executorBuilder().build()).build()).newCall(order(bare)).execute()) {
      assertEquals(201, r.code());
    }
    IdempotentOperation quoted = IdempotentOperation.of("create-order");
    IdemOkHttp sf = IdemOkHttp.builder(executorBuilder().build()).keyFormat(KeyHeaderFormat.STRUCTURED_STRING).build();
    try (Response r = client(sf).newCall(order(quoted)).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(List.of(bare.key().value(), "\"" + quoted.key().value() + "\""), server.keysSent());
  }

  @Test
  void missingKey400IsAThrownConfigurationError() throws Exception {
    server = new KeyedServer(); // expects Idempotency-Key
    IdemOkHttp idem = IdemOkHttp.builder(executorBuilder().build()).headerName("X-Wrong-Name").build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    OperationFailedException e = assertThrows(OperationFailedException.class,
        () -> client(idem).newCall(order(op)).execute());
    assertTrue(e.getMessage().contains("X-Wrong-Name"), e.getMessage());
    assertEquals(400, e.lastResponse().orElseThrow().status());
    assertEquals(OperationState.FAILED, journal.find(op.id()).orElseThrow().state());
    assertEquals(1, server.requests().size(), "a configuration error is not retried");
    assertEquals(0, server.totalEffects());
  }

  @Test
  void garbageRetryAfterIsIgnoredAndBackoffApplies() throws Exception {
    server = new KeyedServer().then(UNAVAILABLE_503_GARBAGE_RETRY_AFTER);
    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (Response r = client(IdemOkHttp.builder(executorBuilder().build()).build()).newCall(order(op)).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(List.of(Duration.ofMillis(100)), time.sleeps(), "plain jittered backoff, no hint");
    assertEquals(1, server.effects(op.key().value()));
  }

  @Test
  void shouldRetryHintOverridesTheClassifierBothWays() throws Exception {
    server = new KeyedServer().then(BAD_REQUEST_400_SHOULD_RETRY);
    IdempotentExecutor executor = executorBuilder()
        .classifier(Classifier.shouldRetryHeader("X-Should-Retry").orElse(Classifier.defaults())).build();
    OkHttpClient client = client(IdemOkHttp.builder(executor).build());
    IdempotentOperation retried = IdempotentOperation.of("create-order");
    try (Response r = client.newCall(order(retried)).execute()) {
      assertEquals(201, r.code(), "a 400 with X-Should-Retry: true was retried");
    }
    assertEquals(1, server.effects(retried.key().value()));

    server.then(UNAVAILABLE_503_SHOULD_NOT_RETRY);
    IdempotentOperation notRetried = IdempotentOperation.of("create-order");
    try (Response r = client.newCall(order(notRetried)).execute()) {
      assertEquals(503, r.code(), "a 503 with X-Should-Retry: false is final, and returned as is");
    }
    assertEquals(OperationState.FAILED, journal.find(notRetried.id()).orElseThrow().state());
    assertEquals(3, server.requests().size());
    assertEquals(0, server.effects(notRetried.key().value()));
  }

  @Test
  void replayedHeaderIsSurfacedAsResultAndLeftOnTheResponse() throws IOException {
    server = new KeyedServer().then(KeyedServer.Fault.COMMIT_THEN_DROP);
    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (Response r = client(IdemOkHttp.builder(executorBuilder().build()).build()).newCall(order(op)).execute()) {
      IdempotencyResult result = IdempotencyResult.of(r).orElseThrow();
      assertTrue(result.replayed());
      assertEquals(OperationState.SUCCEEDED, result.state());
      assertEquals(op.id(), result.operationId());
      assertEquals("true", r.header("Idempotent-Replayed"));
    }
  }
}
