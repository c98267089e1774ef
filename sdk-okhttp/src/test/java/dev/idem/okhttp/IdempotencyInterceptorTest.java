package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.JSON;
import static dev.idem.okhttp.Fixture.client;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.Sleeper;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import dev.idem.testkit.Reply;
import dev.idem.testkit.ReceivedRequest;
import dev.idem.core.testing.VirtualTime;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The required behaviours (issue 3) end to end: a real OkHttpClient with the interceptor against
 * the testkit's reference IdempotentServer. Each test asserts the effects the server ran for the
 * key, the journal, and the key on every request the server received. Backoff and Retry-After run
 * on VirtualTime; the only real waits are a short read timeout and the server's own scripted slowness.
 */
class IdempotencyInterceptorTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  /**
   * A virtual sleeper that first lets the server finish the effect under {@code key} (a real, short
   * wait): where a client gives up before the server is done, a retry sent too early would get 409.
   */
  Sleeper afterServerSettles(String key) {
    return d -> {
      server.awaitEffects(key, 1, Duration.ofSeconds(5));
      f.time.sleeper().sleep(d);
    };
  }

  Request order(IdempotentOperation op, String json) {
    return Fixture.order(server.url("/orders"), op, json);
  }

  OperationRecord record(IdempotentOperation op) throws IOException {
    return f.record(op);
  }

  void assertSameKeyOnEveryRequest(IdempotentOperation op, int requests) {
    Fixture.assertKeyOnEveryRequest(server, op.key().value(), requests);
  }

  static String body(Response r) throws IOException {
    return r.body().string();
  }

  // 1, within one process: single-flight, so one request.
  @Test
  void sameKeyFromEightThreadsOfOneClientHasExactlyOneEffect() throws Exception {
    OkHttpClient client = client(f.idem());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().forKey(op.key().value(), Fault.slowProcessing(Duration.ofMillis(200)));
    List<String> bodies = runConcurrently(8, i -> client, op);
    assertEquals(1, bodies.stream().distinct().count(), "every caller got the one result: " + bodies);
    assertEquals(1, server.effectCount(op.key().value()));
    assertSameKeyOnEveryRequest(op, 1);
    assertEquals(OperationState.SUCCEEDED, record(op).state());
  }

  // 1, across processes (one executor and journal each): the server's 409 and replay decide.
  @Test
  void sameKeyFromEightProcessesAtOnceHasExactlyOneEffect() throws Exception {
    IdempotentOperation op = IdempotentOperation.of("create-order");
    String key = op.key().value();
    server.plan().forKey(key, 8, Fault.slowProcessing(Duration.ofMillis(300)));
    List<OkHttpClient> clients = new ArrayList<>();
    List<InMemoryJournal> journals = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      InMemoryJournal own = new InMemoryJournal();
      journals.add(own);
      clients.add(client(IdemOkHttp.builder(f.executorBuilder().journal(own).sleeper(afterServerSettles(key))
          .retryPolicy(RetryPolicy.builder().maxAttempts(10).build()).build()).build()));
    }
    List<String> bodies = runConcurrently(8, clients::get, op);
    assertEquals(1, bodies.stream().distinct().count(), "every caller got the one result: " + bodies);
    assertEquals(1, server.effectCount(key));
    server.recordedRequests().forEach(r -> assertEquals(Optional.of(key), r.keyHeader()));
    for (InMemoryJournal j : journals) {
      assertEquals(OperationState.SUCCEEDED, j.find(op.id()).orElseThrow().state());
    }
  }

  interface ClientFor {
    OkHttpClient get(int i);
  }

  List<String> runConcurrently(int threads, ClientFor clients, IdempotentOperation op) throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<String>> futures = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        OkHttpClient client = clients.get(i);
        futures.add(pool.submit((Callable<String>) () -> {
          go.await();
          try (Response r = client.newCall(order(op, "{\"sku\":\"A1\",\"qty\":2}")).execute()) {
            assertEquals(201, r.code());
            return body(r);
          }
        }));
      }
      go.countDown();
      List<String> bodies = Collections.synchronizedList(new ArrayList<>());
      for (Future<String> f : futures) {
        bodies.add(f.get(20, TimeUnit.SECONDS));
      }
      return bodies;
    } finally {
      pool.shutdownNow();
    }
  }

  // 2
  @Test
  void sameKeyWithAnotherBodyIsRefusedLocallyBeforeSending() throws Exception {
    OkHttpClient client = client(f.idem());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
    }
    IdempotencyKeyReusedException e = assertThrows(IdempotencyKeyReusedException.class,
        () -> client.newCall(order(op, "{\"qty\":9}")).execute());
    assertFalse(e.detectedByServer());
    assertEquals(1, server.requestCount(), "the second body never left the client");
    assertEquals(1, server.effectCount(op.key().value()));
  }

  // 2, with the local check bypassed by a second executor that has its own journal.
  @Test
  void serverRefusalOfAReusedKeyIsKeyReusedAndFailed() throws Exception {
    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (Response r = client(f.idem())
        .newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
    }
    InMemoryJournal otherJournal = new InMemoryJournal();
    OkHttpClient other = client(IdemOkHttp.builder(f.executorBuilder().journal(otherJournal).build()).build());
    IdempotencyKeyReusedException e = assertThrows(IdempotencyKeyReusedException.class,
        () -> other.newCall(order(op, "{\"qty\":9}")).execute());
    assertTrue(e.detectedByServer());
    assertEquals(OperationState.FAILED, otherJournal.find(op.id()).orElseThrow().state());
    assertEquals(2, server.requestCount(), "422 is permanent: no retry");
    assertEquals(1, server.effectCount(op.key().value()));
  }

  // 3
  @Test
  void commitThenDroppedResponseIsReplayedWithTheOriginalBody() throws Exception {
    OkHttpClient client = client(f.idem());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.commitThenDropResponse());
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
      assertEquals(Fixture.createdBody(1, op.key()), body(r));
      assertEquals("true", r.header("Idempotent-Replayed"), "left on the response");
      IdempotencyResult result = IdempotencyResult.of(r).orElseThrow();
      assertTrue(result.replayed());
      assertEquals(OperationState.SUCCEEDED, result.state());
      assertEquals(op.id(), result.operationId());
    }
    assertEquals(1, server.effectCount(op.key().value()));
    assertSameKeyOnEveryRequest(op, 2);
    assertEquals(OperationState.SUCCEEDED, record(op).state());
    assertTrue(record(op).attempts().get(0).isAmbiguous());
  }

  // 4
  @Test
  void dropBeforeProcessingThenTheRetryCreatesExactlyOneEffect() throws Exception {
    OkHttpClient client = client(f.idem());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.dropRequest());
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
      assertFalse(IdempotencyResult.of(r).orElseThrow().replayed());
      assertNull(r.header("Idempotent-Replayed"));
    }
    assertEquals(1, server.effectCount(op.key().value()));
    assertSameKeyOnEveryRequest(op, 2);
  }

  // 5: the read timeout is a real (short) wait, the only kind allowed.
  @Test
  void serverFinishingAfterTheClientTimeoutIsReplayedOnRetry() throws Exception {
    IdempotentOperation op = IdempotentOperation.of("create-order");
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().sleeper(afterServerSettles(op.key().value())).build())
        .build();
    OkHttpClient client = client(idem).newBuilder().readTimeout(Duration.ofMillis(100)).build();
    server.plan().next(Fault.commitThenDelayResponse(Duration.ofMillis(400)));
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
      assertTrue(IdempotencyResult.of(r).orElseThrow().replayed());
    }
    assertEquals(1, server.effectCount(op.key().value()));
    assertSameKeyOnEveryRequest(op, 2);
    assertTrue(record(op).attempts().get(0).isAmbiguous(), "the timed-out attempt is recorded as ambiguous");
  }

  // 6: another process holds the key in flight; this one waits Retry-After, then gets the replay.
  @Test
  void inFlight409WaitsRetryAfterThenGetsTheReplay() throws Exception {
    serverExtension.server().close();
    // The first request holds its claim until the second client has had its 409: waiting for the
    // server to have received the first request is not enough, as the second could claim first.
    CountDownLatch claimed = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    try (IdempotentServer held = IdempotentServer.builder().handler(request -> {
      claimed.countDown();
      try {
        release.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return Reply.json(201, "{\"id\":\"o-1\"}");
    }).start()) {
      server = held;
      IdempotentOperation op = IdempotentOperation.of("create-order");
      String key = op.key().value();
      OkHttpClient first = client(IdemOkHttp.builder(f.executorBuilder().journal(new InMemoryJournal()).build()).build());
      ExecutorService background = Executors.newSingleThreadExecutor();
      try {
        Future<Integer> firstCall = background.submit(() -> {
          try (Response r = first.newCall(order(op, "{\"qty\":1}")).execute()) {
            return r.code();
          }
        });
        assertTrue(claimed.await(10, TimeUnit.SECONDS), "the first request claimed the key");
        VirtualTime mine = new VirtualTime();
        IdempotentExecutor second = f.executorBuilder().clock(mine.clock()).sleeper(d -> {
          release.countDown();
          server.awaitEffects(key, 1, Duration.ofSeconds(5));
          mine.sleeper().sleep(d);
        }).build();
        try (Response r = client(IdemOkHttp.builder(second).build()).newCall(order(op, "{\"qty\":1}")).execute()) {
          assertEquals(201, r.code());
          assertTrue(IdempotencyResult.of(r).orElseThrow().replayed());
        }
        assertEquals(List.of(Duration.ofSeconds(1)), mine.sleeps(), "waited the server's Retry-After");
        assertEquals(201, firstCall.get(10, TimeUnit.SECONDS));
      } finally {
        release.countDown();
        background.shutdownNow();
      }
      assertEquals(1, server.effectCount(key));
      assertSameKeyOnEveryRequest(op, 3);
      assertEquals(Optional.of(409), record(op).attempts().get(0).statusCode());
    }
  }

  // 7
  @Test
  void unavailableThreeTimesThenSuccess() throws Exception {
    OkHttpClient client = client(f.idem());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().forNext(3, Fault.status(503));
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
      assertEquals(4, IdempotencyResult.of(r).orElseThrow().attempts().size());
    }
    assertEquals(1, server.effectCount(op.key().value()));
    assertSameKeyOnEveryRequest(op, 4);
    // Full jitter at random 0.5: half of 200 ms, 400 ms and 800 ms.
    assertEquals(List.of(Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(400)), f.time.sleeps());
  }

  // 7
  @Test
  void retryAfterInSecondsAndAsHttpDateIsHonoured() throws Exception {
    serverExtension.server().close();
    // The server's clock is the client's virtual clock, so the HTTP-date is exact.
    try (IdempotentServer dated = IdempotentServer.builder().clock(f.time.clock()).start()) {
      server = dated;
      OkHttpClient client = client(f.idem());
      IdempotentOperation op = IdempotentOperation.of("create-order");
      server.plan().next(Fault.tooManyRequests(Duration.ofSeconds(3)))
          .next(Fault.tooManyRequestsUntil(Duration.ofSeconds(5)));
      try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
        assertEquals(201, r.code());
      }
      assertEquals(List.of(Duration.ofSeconds(3), Duration.ofSeconds(5)), f.time.sleeps());
      assertEquals(Instant.parse("2026-01-01T00:00:08Z"), f.time.now());
      assertEquals(1, server.effectCount(op.key().value()));
      assertSameKeyOnEveryRequest(op, 3);
    }
  }

  // 8
  @Test
  void permanent4xxEndsFailedWithoutRetryAndTheCallerGetsTheResponse() throws Exception {
    OkHttpClient client = client(f.idem());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(404));
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(404, r.code());
      assertTrue(body(r).contains("\"status\":404"));
      assertEquals(OperationState.FAILED, IdempotencyResult.of(r).orElseThrow().state());
    }
    assertEquals(OperationState.FAILED, record(op).state());
    assertSameKeyOnEveryRequest(op, 1);
    assertEquals(0, server.effectCount(op.key().value()));
    assertTrue(f.time.sleeps().isEmpty());
  }

  // 8
  @Test
  void ambiguousFailuresUntilAttemptsRunOutEndUncertain() throws Exception {
    IdempotentExecutor executor = f.executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(3).build()).build();
    OkHttpClient client = client(IdemOkHttp.builder(executor).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.dropRequest()).next(Fault.commitThenDropResponse()).next(Fault.dropRequest());
    OperationUncertainException e = assertThrows(OperationUncertainException.class,
        () -> client.newCall(order(op, "{\"qty\":1}")).execute());
    assertEquals(op.id(), e.operationId());
    assertEquals(OperationState.UNCERTAIN, record(op).state());
    assertSameKeyOnEveryRequest(op, 3);
    assertEquals(1, server.effectCount(op.key().value()), "the effect the client never saw is why it is UNCERTAIN");
  }

  // 9
  @Test
  void authorizationIsSentOnEveryAttemptButNeverJournaled() throws Exception {
    OkHttpClient client = client(f.idem());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(503));
    Request request = order(op, "{\"qty\":1}").newBuilder()
        .header("Authorization", "Bearer s3cret")
        .header("Cookie", "session=abc")
        .header("X-Api-Version", "2026-01-01")
        .build();
    try (Response r = client.newCall(request).execute()) {
      assertEquals(201, r.code());
    }
    assertSameKeyOnEveryRequest(op, 2);
    for (ReceivedRequest r : server.recordedRequests()) {
      assertEquals(Optional.of("Bearer s3cret"), r.header("Authorization"), "request " + r.sequence());
      assertEquals(Optional.of(op.key().value()), r.header("Idempotency-Key"));
    }
    OperationRecord rec = record(op);
    assertTrue(rec.request().header("Authorization").isEmpty());
    assertTrue(rec.request().header("Cookie").isEmpty());
    assertEquals("2026-01-01", rec.request().header("X-Api-Version").orElseThrow());
    assertTrue(rec.request().header("Idempotency-Key").isEmpty(), "the key lives in the identity, not the headers");
    assertEquals("{\"qty\":1}", new String(rec.request().body(), StandardCharsets.UTF_8));
  }

  // 10
  @Test
  void oneShotBodyIsRefusedBeforeAnythingIsJournaledOrSent() throws Exception {
    OkHttpClient client = client(f.idem());
    IdempotentOperation op = IdempotentOperation.of("upload");
    RequestBody oneShot = new RequestBody() {
      @Override
      public MediaType contentType() {
        return JSON;
      }

      @Override
      public void writeTo(okio.BufferedSink sink) throws IOException {
        sink.writeUtf8("{\"qty\":1}");
      }

      @Override
      public boolean isOneShot() {
        return true;
      }
    };
    Request request = new Request.Builder().url(server.url("/uploads").toString()).post(oneShot)
        .tag(IdempotentOperation.class, op).build();
    UnreplayableBodyException e = assertThrows(UnreplayableBodyException.class,
        () -> client.newCall(request).execute());
    assertTrue(e.getMessage().contains("one-shot"), e.getMessage());
    assertEquals(0, server.requestCount());
    assertEquals(0, server.totalEffects());
    assertTrue(f.journal.find(op.id()).isEmpty(), "nothing journaled");
  }

  @Test
  void defaultClientRetriesStillOneEffect() throws Exception {
    IdemOkHttp idem = f.idem();
    OkHttpClient client = new OkHttpClient.Builder().addInterceptor(idem.interceptor()).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.commitThenDropResponse()).next(Fault.dropRequest());
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
      assertTrue(body(r).contains("\"effect\":1"));
    }
    assertEquals(1, server.effectCount(op.key().value()));
    server.recordedRequests().forEach(r -> assertEquals(Optional.of(op.key().value()), r.keyHeader()));
  }

  @Test
  void aSettledOperationIsAnsweredFromTheJournalWithoutSending() throws Exception {
    OkHttpClient client = client(f.idem());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request request = order(op, "{\"qty\":1}");
    String first;
    try (Response r = client.newCall(request).execute()) {
      first = body(r);
    }
    try (Response again = client.newCall(request).execute()) {
      assertEquals(201, again.code());
      assertEquals(first, body(again));
      assertTrue(IdempotencyResult.of(again).orElseThrow().fromJournal());
      assertEquals("application/json; charset=utf-8", again.header("Content-Type"));
    }
    assertEquals(1, server.requestCount());
  }

  @Test
  void structuredFieldQuotedKeyIsTheSameKeyToTheServer() throws Exception {
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().build()).keyFormat(KeyHeaderFormat.STRUCTURED_STRING)
        .build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.commitThenDropResponse());
    try (Response r = client(idem).newCall(order(op, "{\"qty\":1}")).execute()) {
      assertTrue(IdempotencyResult.of(r).orElseThrow().replayed());
    }
    server.recordedRequests().forEach(r -> assertEquals(Optional.of("\"" + op.key() + "\""), r.keyHeader()));
    assertEquals(1, server.effectCount(op.key().value()));
  }
}
