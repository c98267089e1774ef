package dev.idem.okhttp;

import static dev.idem.okhttp.KeyedServer.Fault.COMMIT_THEN_ANSWER_LATE;
import static dev.idem.okhttp.KeyedServer.Fault.COMMIT_THEN_DROP;
import static dev.idem.okhttp.KeyedServer.Fault.DROP_BEFORE_PROCESSING;
import static dev.idem.okhttp.KeyedServer.Fault.IN_FLIGHT_409;
import static dev.idem.okhttp.KeyedServer.Fault.NOT_FOUND_404;
import static dev.idem.okhttp.KeyedServer.Fault.TOO_MANY_429_DATE;
import static dev.idem.okhttp.KeyedServer.Fault.TOO_MANY_429_SECONDS;
import static dev.idem.okhttp.KeyedServer.Fault.UNAVAILABLE_503;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.RetryPolicy;
import dev.idem.testkit.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import mockwebserver3.RecordedRequest;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The required behaviours (issue 3) end to end through a real OkHttpClient: each test asserts the
 * server-side effects per key, the journal, and the key on every recorded request.
 */
class IdempotencyInterceptorTest {
  static final MediaType JSON = MediaType.get("application/json");

  VirtualTime time;
  InMemoryJournal journal;
  KeyedServer server;

  @BeforeEach
  void setUp() throws IOException {
    time = new VirtualTime();
    journal = new InMemoryJournal();
    server = new KeyedServer();
  }

  @AfterEach
  void tearDown() {
    server.close();
  }

  IdempotentExecutor.Builder executorBuilder() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).random(() -> 0.5);
  }

  // OkHttp's own silent retry of a failed connection is off so that request counts are exact; the
  // key would make those retries harmless too (see defaultClientRetriesStillOneEffect).
  static OkHttpClient client(IdemOkHttp idem) {
    return new OkHttpClient.Builder().addInterceptor(idem.interceptor()).retryOnConnectionFailure(false).build();
  }

  Request order(IdempotentOperation op, String json) {
    return new Request.Builder().url(server.url("/orders")).post(RequestBody.create(json, JSON))
        .tag(IdempotentOperation.class, op).build();
  }

  OperationRecord record(IdempotentOperation op) throws IOException {
    return journal.find(op.id()).orElseThrow();
  }

  void assertSameKeyEverywhere(IdempotentOperation op, int requests) {
    List<String> keys = server.keysSent();
    assertEquals(requests, keys.size(), "requests sent");
    keys.forEach(k -> assertEquals(op.key().value(), k));
  }

  // 1
  @Test
  void sameKeyFromEightThreadsAtOnceHasExactlyOneEffect() throws Exception {
    IdemOkHttp idem = IdemOkHttp.builder(executorBuilder().build()).build();
    OkHttpClient client = client(idem);
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.answerDelay(200);
    int threads = 8;
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<String>> bodies = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        bodies.add(pool.submit((Callable<String>) () -> {
          go.await();
          try (Response r = client.newCall(order(op, "{\"sku\":\"A1\",\"qty\":2}")).execute()) {
            assertEquals(201, r.code());
            return r.body().string();
          }
        }));
      }
      go.countDown();
      for (Future<String> body : bodies) {
        assertEquals("{\"order\":1}", body.get(10, TimeUnit.SECONDS));
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(1, server.effects(op.key().value()));
    assertSameKeyEverywhere(op, 1);
    assertEquals(OperationState.SUCCEEDED, record(op).state());
  }

  // 2
  @Test
  void sameKeyWithAnotherBodyIsRefusedLocallyBeforeSending() throws Exception {
    OkHttpClient client = client(IdemOkHttp.builder(executorBuilder().build()).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
    }
    IdempotencyKeyReusedException e = assertThrows(IdempotencyKeyReusedException.class,
        () -> client.newCall(order(op, "{\"qty\":9}")).execute());
    assertFalse(e.detectedByServer());
    assertEquals(1, server.requests().size(), "the second body never left the client");
    assertEquals(1, server.effects(op.key().value()));
  }

  // 2, bypassed: another process with its own journal reuses the key; the server's 422 decides.
  @Test
  void serverRefusalOfAReusedKeyIsKeyReusedAndFailed() throws Exception {
    IdempotentOperation op = IdempotentOperation.of("create-order");
    OkHttpClient first = client(IdemOkHttp.builder(executorBuilder().build()).build());
    try (Response r = first.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
    }
    InMemoryJournal otherJournal = new InMemoryJournal();
    IdempotentExecutor other = executorBuilder().journal(otherJournal).build();
    OkHttpClient second = client(IdemOkHttp.builder(other).build());
    IdempotencyKeyReusedException e = assertThrows(IdempotencyKeyReusedException.class,
        () -> second.newCall(order(op, "{\"qty\":9}")).execute());
    assertTrue(e.detectedByServer());
    assertEquals(OperationState.FAILED, otherJournal.find(op.id()).orElseThrow().state());
    assertEquals(2, server.requests().size(), "422 is permanent: no retry");
    assertEquals(1, server.effects(op.key().value()));
  }

  // 3
  @Test
  void commitThenDroppedResponseIsReplayedWithTheOriginalBody() throws Exception {
    OkHttpClient client = client(IdemOkHttp.builder(executorBuilder().build()).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.then(COMMIT_THEN_DROP);
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
      assertEquals("{\"order\":1}", r.body().string());
      assertEquals("true", r.header("Idempotent-Replayed"));
      assertTrue(IdempotencyResult.of(r).orElseThrow().replayed());
    }
    assertEquals(1, server.effects(op.key().value()));
    assertSameKeyEverywhere(op, 2);
    assertEquals(OperationState.SUCCEEDED, record(op).state());
    assertEquals(2, record(op).attempts().size());
  }

  // 4
  @Test
  void dropBeforeProcessingThenTheRetryCreatesExactlyOneEffect() throws Exception {
    OkHttpClient client = client(IdemOkHttp.builder(executorBuilder().build()).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.then(DROP_BEFORE_PROCESSING);
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
      assertFalse(IdempotencyResult.of(r).orElseThrow().replayed());
      assertEquals(null, r.header("Idempotent-Replayed"));
    }
    assertEquals(1, server.effects(op.key().value()));
    assertSameKeyEverywhere(op, 2);
  }

  // 5: the only real wait in these tests is this short read timeout.
  @Test
  void serverFinishingAfterTheClientTimeoutIsReplayedOnRetry() throws Exception {
    IdemOkHttp idem = IdemOkHttp.builder(executorBuilder().build()).build();
    OkHttpClient client = client(idem).newBuilder().readTimeout(Duration.ofMillis(250)).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.then(COMMIT_THEN_ANSWER_LATE);
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
      assertEquals("{\"order\":1}", r.body().string());
      assertTrue(IdempotencyResult.of(r).orElseThrow().replayed());
    }
    assertEquals(1, server.effects(op.key().value()));
    assertSameKeyEverywhere(op, 2);
    assertTrue(record(op).attempts().get(0).isAmbiguous(), "the timed-out attempt is recorded as ambiguous");
  }

  // 6
  @Test
  void inFlight409WaitsAtLeastRetryAfterThenGetsTheReplay() throws Exception {
    OkHttpClient client = client(IdemOkHttp.builder(executorBuilder().build()).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.then(IN_FLIGHT_409);
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
      assertTrue(IdempotencyResult.of(r).orElseThrow().replayed());
    }
    assertEquals(List.of(Duration.ofSeconds(2)), time.sleeps());
    assertEquals(1, server.effects(op.key().value()));
    assertSameKeyEverywhere(op, 2);
  }

  // 7
  @Test
  void threeUnavailableThenSuccess() throws Exception {
    OkHttpClient client = client(IdemOkHttp.builder(executorBuilder().build()).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.then(UNAVAILABLE_503, UNAVAILABLE_503, UNAVAILABLE_503);
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
      assertEquals(4, IdempotencyResult.of(r).orElseThrow().attempts().size());
    }
    assertEquals(1, server.effects(op.key().value()));
    assertSameKeyEverywhere(op, 4);
    assertEquals(3, time.sleeps().size());
    // Full jitter at random 0.5: half of 200 ms, 400 ms, 800 ms.
    assertEquals(List.of(Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(400)), time.sleeps());
  }

  // 7
  @Test
  void retryAfterInSecondsAndAsHttpDateIsHonoured() throws Exception {
    OkHttpClient client = client(IdemOkHttp.builder(executorBuilder().build()).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    // VirtualTime starts at 2026-01-01T00:00:00Z; after the 3 s wait, the date hint is 5 s later.
    server.retryAfterDate("Thu, 01 Jan 2026 00:00:08 GMT").then(TOO_MANY_429_SECONDS, TOO_MANY_429_DATE);
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(List.of(Duration.ofSeconds(3), Duration.ofSeconds(5)), time.sleeps());
    assertEquals(Instant.parse("2026-01-01T00:00:08Z"), time.now());
    assertEquals(1, server.effects(op.key().value()));
    assertSameKeyEverywhere(op, 3);
  }

  // 8
  @Test
  void permanent404EndsFailedWithoutRetryAndTheCallerGetsTheResponse() throws Exception {
    OkHttpClient client = client(IdemOkHttp.builder(executorBuilder().build()).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.then(NOT_FOUND_404);
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(404, r.code());
      assertEquals("{\"error\":\"no such account\"}", r.body().string());
      assertEquals(OperationState.FAILED, IdempotencyResult.of(r).orElseThrow().state());
    }
    assertEquals(OperationState.FAILED, record(op).state());
    assertSameKeyEverywhere(op, 1);
    assertEquals(0, server.effects(op.key().value()));
    assertTrue(time.sleeps().isEmpty());
  }

  // 8
  @Test
  void ambiguousFailuresUntilAttemptsRunOutEndUncertain() throws Exception {
    IdempotentExecutor executor = executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(3).build()).build();
    OkHttpClient client = client(IdemOkHttp.builder(executor).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.then(DROP_BEFORE_PROCESSING, COMMIT_THEN_DROP, DROP_BEFORE_PROCESSING);
    OperationUncertainException e = assertThrows(OperationUncertainException.class,
        () -> client.newCall(order(op, "{\"qty\":1}")).execute());
    assertEquals(op.id(), e.operationId());
    assertEquals(OperationState.UNCERTAIN, record(op).state());
    assertSameKeyEverywhere(op, 3);
    assertEquals(1, server.effects(op.key().value()), "the effect the client cannot see is why it is UNCERTAIN");
  }

  // 9
  @Test
  void authorizationIsSentLiveButNeverJournaled() throws Exception {
    OkHttpClient client = client(IdemOkHttp.builder(executorBuilder().build()).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.then(UNAVAILABLE_503);
    Request request = order(op, "{\"qty\":1}").newBuilder()
        .header("Authorization", "Bearer s3cret")
        .header("Cookie", "session=abc")
        .header("X-Api-Version", "2026-01-01")
        .build();
    try (Response r = client.newCall(request).execute()) {
      assertEquals(201, r.code());
    }
    for (RecordedRequest sent : server.requests()) {
      assertEquals("Bearer s3cret", sent.getHeaders().get("Authorization"));
    }
    assertSameKeyEverywhere(op, 2);
    OperationRecord rec = record(op);
    assertTrue(rec.request().header("Authorization").isEmpty());
    assertTrue(rec.request().header("Cookie").isEmpty());
    assertEquals("2026-01-01", rec.request().header("X-Api-Version").orElseThrow());
    assertTrue(rec.request().header("Idempotency-Key").isEmpty(), "the key lives in the identity, not the headers");
    assertEquals("{\"qty\":1}", new String(rec.request().body(), java.nio.charset.StandardCharsets.UTF_8));
  }

  // 10
  @Test
  void oneShotBodyIsRefusedBeforeAnythingIsJournaledOrSent() throws Exception {
    OkHttpClient client = client(IdemOkHttp.builder(executorBuilder().build()).build());
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
    Request request = new Request.Builder().url(server.url("/uploads")).post(oneShot)
        .tag(IdempotentOperation.class, op).build();
    UnreplayableBodyException e = assertThrows(UnreplayableBodyException.class,
        () -> client.newCall(request).execute());
    assertTrue(e.getMessage().contains("one-shot"), e.getMessage());
    assertTrue(server.requests().isEmpty());
    assertEquals(0, server.totalEffects());
    assertTrue(journal.find(op.id()).isEmpty(), "nothing journaled");
  }

  @Test
  void defaultClientRetriesStillOneEffect() throws Exception {
    IdemOkHttp idem = IdemOkHttp.builder(executorBuilder().build()).build();
    OkHttpClient client = new OkHttpClient.Builder().addInterceptor(idem.interceptor()).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.then(COMMIT_THEN_DROP, DROP_BEFORE_PROCESSING);
    try (Response r = client.newCall(order(op, "{\"qty\":1}")).execute()) {
      assertEquals(201, r.code());
      assertEquals("{\"order\":1}", r.body().string());
    }
    assertEquals(1, server.effects(op.key().value()));
    server.keysSent().forEach(k -> assertEquals(op.key().value(), k));
  }

  @Test
  void aSettledOperationIsAnsweredFromTheJournalWithoutSending() throws Exception {
    OkHttpClient client = client(IdemOkHttp.builder(executorBuilder().build()).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request request = order(op, "{\"qty\":1}");
    try (Response r = client.newCall(request).execute()) {
      assertEquals(201, r.code());
    }
    try (Response again = client.newCall(request).execute()) {
      assertEquals(201, again.code());
      assertEquals("{\"order\":1}", again.body().string());
      assertTrue(IdempotencyResult.of(again).orElseThrow().fromJournal());
      assertNotNull(again.header("Content-Type"));
    }
    assertEquals(1, server.requests().size());
  }
}
