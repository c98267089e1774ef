package dev.idem.httpclient;

import static dev.idem.httpclient.Fixture.assertKeyOnEveryRequest;
import static dev.idem.httpclient.Fixture.createdBody;
import static dev.idem.httpclient.Fixture.keysSent;
import static dev.idem.httpclient.Fixture.untilSettled;
import static dev.idem.httpclient.Fixture.withHook;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.Classifier;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.ProtocolStatuses;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.RetryPolicy;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import dev.idem.testkit.ReceivedRequest;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The required behaviour of issue 3 through the java.net.http decorator, each scenario asserting
 * what the server did (effects per key), what the journal holds, and the key on every request.
 * Scenarios that make sense both ways run through {@code send} and {@code sendAsync}. The server
 * is the testkit's reference {@link IdempotentServer}, one per test.
 */
class IdempotentHttpClientTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  private IdempotentServer server;

  @BeforeEach
  void start() {
    server = serverExtension.server();
  }

  private URI orders() {
    return server.url("/orders");
  }

  // 1. Same key from 8 threads at once: exactly one effect.
  @Test
  void sameKeyFromEightThreadsHasOneEffect() throws Exception {
    Fixture f = new Fixture();
    IdempotencyKey key = IdempotencyKey.generate();
    HttpRequest request = Fixture.post(orders(), "{\"sku\":\"A-1\",\"qty\":1}");
    int threads = 8;
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<IdempotentHttpResponse<String>>> results = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        results.add(pool.submit(() -> {
          go.await();
          return f.client.operation("create-order").key(key).send(request, BodyHandlers.ofString());
        }));
      }
      go.countDown();
      for (Future<IdempotentHttpResponse<String>> r : results) {
        IdempotentHttpResponse<String> response = r.get(15, TimeUnit.SECONDS);
        assertEquals(201, response.statusCode());
        assertEquals(createdBody(1, key), response.body());
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(1, server.effectCount(key.value()));
    assertEquals(1, server.totalEffects());
    assertEquals(OperationState.SUCCEEDED, f.record(new OperationId("default", "create-order", key)).state());
  }

  @Test
  void sameKeyFromEightAsyncCallsAtOnceHasOneEffect() throws Exception {
    Fixture f = new Fixture();
    IdempotencyKey key = IdempotencyKey.generate();
    HttpRequest request = Fixture.post(orders(), "{\"sku\":\"A-1\"}");
    List<CompletableFuture<IdempotentHttpResponse<String>>> calls = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      calls.add(f.client.operation("create-order").key(key).sendAsync(request, BodyHandlers.ofString()));
    }
    for (CompletableFuture<IdempotentHttpResponse<String>> c : calls) {
      assertEquals(createdBody(1, key), f.await(c).body());
    }
    assertEquals(1, server.effectCount(key.value()));
    assertEquals(1, server.requestCount());
  }

  // 2. Same key, different body: refused locally; if bypassed, the server's 422.
  @ParameterizedTest
  @EnumSource(Mode.class)
  void sameKeyWithAnotherBodyIsRefusedBeforeSending(Mode mode) throws Exception {
    Fixture f = new Fixture();
    IdempotencyKey key = IdempotencyKey.generate();
    mode.send(f, f.client.operation("create-order").key(key), Fixture.post(orders(), "{\"qty\":1}"),
        BodyHandlers.ofString());
    assertEquals(1, server.requestCount());

    IdempotencyKeyReusedException e = assertThrows(IdempotencyKeyReusedException.class, () -> mode.send(f,
        f.client.operation("create-order").key(key), Fixture.post(orders(), "{\"qty\":2}"), BodyHandlers.ofString()));
    assertFalse(e.detectedByServer());
    assertEquals(1, server.requestCount(), "refused before any byte was sent");
    assertEquals(1, server.effectCount(key.value()));
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void serverRefusesAReusedKeyWith422WhenTheLocalCheckIsBypassed(Mode mode) throws Exception {
    Fixture first = new Fixture();
    IdempotencyKey key = IdempotencyKey.generate();
    mode.send(first, first.client.operation("create-order").key(key), Fixture.post(orders(), "{\"qty\":1}"),
        BodyHandlers.ofString());

    Fixture other = new Fixture(); // its own journal: the local check cannot see the first body
    IdempotencyKeyReusedException e = assertThrows(IdempotencyKeyReusedException.class, () -> mode.send(other,
        other.client.operation("create-order").key(key), Fixture.post(orders(), "{\"qty\":2}"),
        BodyHandlers.ofString()));
    assertTrue(e.detectedByServer());
    assertEquals(2, server.requestCount(), "a 422 is permanent: no retry");
    assertEquals(1, server.effectCount(key.value()));
    assertEquals(OperationState.FAILED, other.record(new OperationId("default", "create-order", key)).state());
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void a417OnReuseWithThePresetIsKeyReusedNowAndOnTheNextCall(Mode mode) throws Exception {
    Fixture f = new Fixture(b -> b.protocol(ProtocolStatuses.reuseAs417()), c -> { });
    IdempotencyKey key = IdempotencyKey.generate();
    server.plan().next(Fault.status(417));

    for (int call = 1; call <= 2; call++) {
      IdempotencyKeyReusedException e = assertThrows(IdempotencyKeyReusedException.class, () -> mode.send(f,
          f.client.operation("create-order").key(key), Fixture.post(orders(), "{\"qty\":1}"),
          BodyHandlers.ofString()), "call " + call);
      assertTrue(e.detectedByServer());
    }
    assertEquals(1, server.requestCount(), "not retried, and the second call sent nothing");
    assertEquals(OperationState.FAILED, f.record(new OperationId("default", "create-order", key)).state());
  }

  // 3. Commit, then drop the response: the retry is a replay, one effect, original body.
  @ParameterizedTest
  @EnumSource(Mode.class)
  void commitThenDropIsReplayedWithTheOriginalBody(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.commitThenDropResponse());
    OperationCall call = f.client.operation("create-order").reference("cart-1");
    IdempotentHttpResponse<String> r = mode.send(f, call, Fixture.post(orders(), "{\"sku\":\"A-1\"}"),
        BodyHandlers.ofString());

    assertEquals(201, r.statusCode());
    assertEquals(createdBody(1, call.key()), r.body(), "the body of the first, committed attempt");
    assertTrue(r.replayed(), "Idempotent-Replayed: true is surfaced");
    assertEquals("true", r.headers().firstValue("Idempotent-Replayed").orElseThrow());
    assertEquals(1, server.effectCount(call.key().value()));
    assertKeyOnEveryRequest(server, call.key(), 2);
    OperationRecord rec = f.record(call.operationId());
    assertEquals(OperationState.SUCCEEDED, rec.state());
    assertEquals(List.of(Classification.AMBIGUOUS, Classification.SUCCESS),
        rec.attempts().stream().map(AttemptRecord::classification).toList());
  }

  // 4. Drop before processing: the retry creates exactly one effect.
  @ParameterizedTest
  @EnumSource(Mode.class)
  void dropBeforeProcessingRetryCreatesOneEffect(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.dropRequest());
    OperationCall call = f.client.operation("create-order");
    IdempotentHttpResponse<String> r = mode.send(f, call, Fixture.post(orders(), "{}"), BodyHandlers.ofString());
    assertEquals(201, r.statusCode());
    assertFalse(r.replayed(), "the retry did the work; nothing to replay");
    assertEquals(1, server.effectCount(call.key().value()));
    assertKeyOnEveryRequest(server, call.key(), 2);
  }

  // 5. The server finishes after the client's timeout: the retry replays.
  @ParameterizedTest
  @EnumSource(Mode.class)
  void answerAfterTheClientTimeoutIsReplayedOnRetry(Mode mode) throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    // The timeout proves nothing about the server's progress: the retry waits for the effect.
    Fixture f = withHook(mode, untilSettled(server, key, Duration.ZERO));
    server.plan().next(Fault.commitThenDelayResponse(Duration.ofSeconds(1)));
    HttpRequest request = HttpRequest.newBuilder(orders())
        .timeout(Duration.ofMillis(300)) // the only real wait in these tests
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"B-2\"}"))
        .build();
    OperationCall call = f.client.operation("create-order").key(key);
    IdempotentHttpResponse<String> r = mode.send(f, call, request, BodyHandlers.ofString());
    assertEquals(201, r.statusCode());
    assertTrue(r.replayed());
    assertEquals(createdBody(1, key), r.body());
    assertEquals(1, server.effectCount(key.value()));
    assertKeyOnEveryRequest(server, call.key(), 2);
    assertEquals(Classification.AMBIGUOUS, f.record(call.operationId()).attempts().get(0).classification(),
        "a timeout after sending is ambiguous");
  }

  // 6. 409 while in flight: the client waits at least Retry-After, then gets the replay.
  @ParameterizedTest
  @EnumSource(Mode.class)
  void inFlight409WaitsThenGetsTheReplay(Mode mode) throws Exception {
    try (IdempotentServer slow = IdempotentServer.builder().inFlightRetryAfter(Duration.ofSeconds(2)).start()) {
      IdempotencyKey key = IdempotencyKey.generate();
      // The first attempt times out while the server holds the key; the second gets 409; the
      // wait after it (Retry-After, 2 s) lets the server finish in real time.
      slow.plan().next(Fault.slowProcessing(Duration.ofMillis(600)));
      Fixture f = withHook(mode, untilSettled(slow, key, Duration.ofSeconds(2)));
      HttpRequest request = HttpRequest.newBuilder(slow.url("/orders"))
          .timeout(Duration.ofMillis(150))
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"C-3\"}"))
          .build();
      OperationCall call = f.client.operation("create-order").key(key);
      IdempotentHttpResponse<String> r = mode.send(f, call, request, BodyHandlers.ofString());

      assertEquals(201, r.statusCode());
      assertTrue(r.replayed());
      assertEquals(List.of(Optional.empty(), Optional.of(409), Optional.of(201)),
          f.record(call.operationId()).attempts().stream().map(AttemptRecord::statusCode).toList(),
          "a timeout, then the one 409 in flight, then the replay");
      assertEquals(1, slow.effectCount(key.value()));
      assertKeyOnEveryRequest(slow, key, 3);
      List<Duration> waits = f.time.sleeps();
      assertEquals(2, waits.size());
      assertEquals(Duration.ofSeconds(2), waits.get(1), "Retry-After: 2 on the 409 sets the wait");
    }
  }

  // 7. 503 x N, then success; 429 with Retry-After is honoured.
  @ParameterizedTest
  @EnumSource(Mode.class)
  void unavailableThreeTimesThenSuccess(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().forNext(3, Fault.status(503));
    OperationCall call = f.client.operation("create-order");
    IdempotentHttpResponse<String> r = mode.send(f, call, Fixture.post(orders(), "{}"), BodyHandlers.ofString());
    assertEquals(201, r.statusCode());
    assertEquals(1, server.effectCount(call.key().value()));
    assertKeyOnEveryRequest(server, call.key(), 4);
    assertEquals(3, f.time.sleeps().size());
    f.time.sleeps().forEach(d -> assertTrue(d.compareTo(Fixture.POLICY.maxDelay()) <= 0, "bounded: " + d));
    assertEquals(4, r.attempts().size());
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void tooManyRequestsHonoursRetryAfterSeconds(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.tooManyRequests(Duration.ofSeconds(3)));
    OperationCall call = f.client.operation("create-order");
    assertEquals(201, mode.send(f, call, Fixture.post(orders(), "{}"), BodyHandlers.ofString()).statusCode());
    assertEquals(List.of(Duration.ofSeconds(3)), f.time.sleeps());
    assertEquals(1, server.effectCount(call.key().value()));
    assertEquals(1, server.totalEffects());
    assertKeyOnEveryRequest(server, call.key(), 2);
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void tooManyRequestsHonoursRetryAfterHttpDate(Mode mode) throws Exception {
    Fixture f = new Fixture();
    // The server dates its hint by the test's virtual clock: Thu, 01 Jan 2026 00:00:05 GMT.
    try (IdempotentServer dated = IdempotentServer.builder().clock(f.time.clock()).start()) {
      dated.plan().next(Fault.tooManyRequestsUntil(Duration.ofSeconds(5)));
      OperationCall call = f.client.operation("create-order");
      assertEquals(201, mode.send(f, call, Fixture.post(dated.url("/orders"), "{}"), BodyHandlers.ofString())
          .statusCode());
      assertEquals(List.of(Duration.ofSeconds(5)), f.time.sleeps());
      assertEquals(1, dated.effectCount(call.key().value()));
      assertEquals(1, dated.totalEffects());
    }
  }

  // A 5xx does not mean nothing happened.
  @ParameterizedTest
  @EnumSource(Mode.class)
  void errorAfterCommitIsRetriedIntoTheReplay(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.commitThenStatus(500));
    OperationCall call = f.client.operation("create-order");
    IdempotentHttpResponse<String> r = mode.send(f, call, Fixture.post(orders(), "{}"), BodyHandlers.ofString());
    assertTrue(r.replayed(), "a 500 did not mean nothing happened");
    assertEquals(1, server.effectCount(call.key().value()));
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void garbageRetryAfterIsIgnoredSafely(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.status(503).withHeader("Retry-After", "soon-ish, maybe"));
    OperationCall call = f.client.operation("create-order");
    assertEquals(201, mode.send(f, call, Fixture.post(orders(), "{}"), BodyHandlers.ofString()).statusCode());
    assertEquals(1, f.time.sleeps().size());
    assertTrue(f.time.sleeps().get(0).compareTo(Fixture.POLICY.maxDelay()) < 0, "plain backoff, no hint");
    assertEquals(1, server.effectCount(call.key().value()));
  }

  // 8. A permanent 4xx ends FAILED with no retry; the response is returned, as HttpClient would.
  @ParameterizedTest
  @EnumSource(Mode.class)
  void permanent4xxEndsFailedWithoutRetryAndReturnsTheResponse(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.status(404));
    OperationCall call = f.client.operation("create-order");
    IdempotentHttpResponse<String> r = mode.send(f, call, Fixture.post(orders(), "{}"), BodyHandlers.ofString());
    assertEquals(404, r.statusCode());
    assertTrue(r.body().contains("\"status\":404"), "the server's own 404 body: " + r.body());
    assertEquals(OperationState.FAILED, r.state());
    assertEquals(1, server.requestCount(), "no retry");
    assertEquals(0, server.totalEffects());
    assertEquals(OperationState.FAILED, f.record(call.operationId()).state());
    assertTrue(f.time.sleeps().isEmpty());
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void ambiguousFailuresUntilAttemptsRunOutEndUncertain(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().forNext(Fixture.POLICY.maxAttempts(), Fault.dropRequest());
    OperationCall call = f.client.operation("create-order");
    OperationUncertainException e = assertThrows(OperationUncertainException.class,
        () -> mode.send(f, call, Fixture.post(orders(), "{}"), BodyHandlers.ofString()));
    assertEquals(call.operationId(), e.operationId());
    assertEquals(OperationState.UNCERTAIN, f.record(call.operationId()).state());
    assertKeyOnEveryRequest(server, call.key(), Fixture.POLICY.maxAttempts());
    assertEquals(0, server.totalEffects(), "the client cannot know that; it says UNCERTAIN, never FAILED");
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void refusedConnectionsEndFailedNotUncertain(Mode mode) throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Fixture f = new Fixture();
    OperationCall call = f.client.operation("create-order");
    HttpRequest request = Fixture.post(URI.create("http://127.0.0.1:" + port + "/orders"), "{}");
    OperationFailedException e = assertThrows(OperationFailedException.class,
        () -> mode.send(f, call, request, BodyHandlers.ofString()));
    assertTrue(e.lastResponse().isEmpty());
    OperationRecord rec = f.record(call.operationId());
    assertEquals(OperationState.FAILED, rec.state());
    assertEquals(Fixture.POLICY.maxAttempts(), rec.attempts().size());
    rec.attempts().forEach(a -> {
      assertEquals(Classification.SAFE, a.classification());
      assertEquals(RequestNotSentException.class.getName(), a.exceptionClass());
    });
  }

  // 9. One key on every request, and no Authorization in the journal.
  @ParameterizedTest
  @EnumSource(Mode.class)
  void authorizationGoesOutOnEveryAttemptButNeverIntoTheJournal(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.status(503)).next(Fault.commitThenDropResponse());
    OperationCall call = f.client.operation("create-order");
    mode.send(f, call, Fixture.post(orders(), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());
    assertKeyOnEveryRequest(server, call.key(), 3);
    for (ReceivedRequest r : server.recordedRequests()) {
      assertEquals(Optional.of("Bearer s3cr3t"), r.header("Authorization"), "live attempts carry the secret");
      assertEquals("{\"sku\":\"A-1\"}", r.body(), "same payload on every attempt");
    }
    OperationRecord rec = f.record(call.operationId());
    assertTrue(rec.request().header("Authorization").isEmpty(), "journaled snapshot holds no secret");
    assertTrue(rec.request().header("Idempotency-Key").isEmpty(), "the key lives in the identity, not a header");
    assertEquals("application/json", rec.request().header("Content-Type").orElseThrow());
  }

  // 10. A one-shot body: read once for the journal, so a retry replays those bytes, no duplicate.
  @ParameterizedTest
  @EnumSource(Mode.class)
  void oneShotPublisherIsReadOnceAndRetriedWithoutDuplicate(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.commitThenDropResponse());
    OneShotPublisher body = new OneShotPublisher("{\"sku\":\"D-4\"}");
    HttpRequest request = HttpRequest.newBuilder(orders()).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.fromPublisher(body)).build();
    OperationCall call = f.client.operation("create-order");
    IdempotentHttpResponse<String> r = mode.send(f, call, request, BodyHandlers.ofString());
    assertEquals(201, r.statusCode());
    assertTrue(r.replayed());
    assertEquals(1, body.subscriptions(), "Idem subscribed once; attempts send the captured bytes");
    assertEquals(1, server.effectCount(call.key().value()));
    server.recordedRequests().forEach(rr -> assertEquals("{\"sku\":\"D-4\"}", rr.body()));
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void consumedOneShotBodyGetsAClearErrorAndNothingIsSent(Mode mode) throws Exception {
    Fixture f = new Fixture();
    OneShotPublisher body = new OneShotPublisher("{\"sku\":\"E-5\"}");
    body.consume(); // someone already read it
    HttpRequest request = HttpRequest.newBuilder(orders())
        .POST(HttpRequest.BodyPublishers.fromPublisher(body)).build();
    OperationCall call = f.client.operation("create-order");
    RequestNotSentException e = assertThrows(RequestNotSentException.class,
        () -> mode.send(f, call, request, BodyHandlers.ofString()));
    assertTrue(e.getMessage().contains("nothing was journaled or sent"), e.getMessage());
    assertEquals(0, server.requestCount());
    assertTrue(f.executor.find(call.operationId()).isEmpty(), "not journaled");
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void bodyAboveTheLimitIsRefusedBeforeSending(Mode mode) throws Exception {
    Fixture f = new Fixture(b -> { }, c -> c.maxBodyBytes(8));
    OperationCall call = f.client.operation("create-order");
    assertThrows(IllegalArgumentException.class,
        () -> mode.send(f, call, Fixture.post(orders(), "{\"sku\":\"too-long\"}"), BodyHandlers.ofString()));
    assertEquals(0, server.requestCount());
    assertTrue(f.executor.find(call.operationId()).isEmpty());
  }

  // Header name, format, hints.
  @Test
  void keyHeaderNameIsConfigurable() throws Exception {
    try (IdempotentServer custom = IdempotentServer.builder().keyHeader("X-Request-Key").start()) {
      Fixture f = new Fixture(b -> { }, c -> c.keyHeader("X-Request-Key"));
      OperationCall call = f.client.operation("create-order");
      assertEquals(201, call.send(Fixture.post(custom.url("/orders"), "{}"), BodyHandlers.ofString()).statusCode());
      assertKeyOnEveryRequest(custom, call.key(), 1);
      assertEquals(Optional.empty(), custom.recordedRequests().get(0).header("Idempotency-Key"));
    }
  }

  @Test
  void keyIsBareByDefaultAndQuotedAsAStructuredFieldOnRequest() throws Exception {
    IdempotencyKey key = IdempotencyKey.of("order-123");
    new Fixture().client.operation("create-order").key(key)
        .send(Fixture.post(orders(), "{}"), BodyHandlers.ofString());
    Fixture quoted = new Fixture(b -> { }, c -> c.keyFormat(KeyHeaderFormat.STRUCTURED_STRING));
    IdempotencyKey key2 = IdempotencyKey.of("order-456");
    quoted.client.operation("create-order").key(key2).send(Fixture.post(orders(), "{}"), BodyHandlers.ofString());
    assertEquals(List.of(Optional.of("order-123"), Optional.of("\"order-456\"")), keysSent(server));
    assertEquals("\"a'b;c\"", KeyHeaderFormat.STRUCTURED_STRING.format(IdempotencyKey.of("a'b;c")));
  }

  @Test
  void structuredFieldKeyIsTheSameKeyToTheServer() throws Exception {
    Fixture f = new Fixture(b -> { }, c -> c.keyFormat(KeyHeaderFormat.STRUCTURED_STRING));
    server.plan().next(Fault.commitThenDropResponse());
    OperationCall call = f.client.operation("create-order");
    assertTrue(call.send(Fixture.post(orders(), "{}"), BodyHandlers.ofString()).replayed());
    server.recordedRequests().forEach(r -> assertEquals("\"" + call.key().value() + "\"", r.keyHeader().orElseThrow()));
    assertEquals(1, server.effectCount(call.key().value()));
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void shouldRetryHintOverridesTheClassifier(Mode mode) throws Exception {
    Fixture f = new Fixture(b -> b.classifier(Classifier.shouldRetryHeader("X-Should-Retry")
        .orElse(Classifier.defaults())), c -> { });
    server.plan().next(Fault.status(400).withHeader("X-Should-Retry", "true"));
    OperationCall retried = f.client.operation("create-order");
    assertEquals(201, mode.send(f, retried, Fixture.post(orders(), "{}"), BodyHandlers.ofString()).statusCode(),
        "a 400 hinted true is retried");
    assertEquals(2, server.requestCount());

    server.plan().next(Fault.status(503).withHeader("X-Should-Retry", "false"));
    OperationCall stopped = f.client.operation("create-order");
    IdempotentHttpResponse<String> r = mode.send(f, stopped, Fixture.post(orders(), "{}"), BodyHandlers.ofString());
    assertEquals(503, r.statusCode(), "a 503 hinted false is final");
    assertEquals(OperationState.FAILED, r.state());
    assertEquals(3, server.requestCount());
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void missingKeyAt400IsAConfigurationErrorThatThrows(Mode mode) throws Exception {
    // The client sends its key under a name the server does not know.
    Fixture f = new Fixture(b -> { }, c -> c.keyHeader("X-Wrong-Key"));
    OperationCall call = f.client.operation("create-order");
    OperationFailedException e = assertThrows(OperationFailedException.class,
        () -> mode.send(f, call, Fixture.post(orders(), "{}"), BodyHandlers.ofString()));
    assertEquals(400, e.lastResponse().orElseThrow().status());
    assertEquals(1, server.requestCount());
    assertEquals(OperationState.FAILED, f.record(call.operationId()).state());
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void anOrdinary400IsReturnedNotThrown(Mode mode) throws Exception {
    Fixture f = new Fixture(); // no should-retry classifier: the hint header means nothing here
    server.plan().next(Fault.status(400).withHeader("X-Should-Retry", "true"));
    OperationCall call = f.client.operation("create-order");
    IdempotentHttpResponse<String> r = mode.send(f, call, Fixture.post(orders(), "{}"), BodyHandlers.ofString());
    assertEquals(400, r.statusCode(), "a validation answer, not a key problem: returned as HttpClient would");
    assertEquals(OperationState.FAILED, r.state());
    assertEquals(1, server.requestCount());
  }

  @Test
  void interruptDuringBackoffThrowsInterruptedExceptionAndLeavesThePendingKey() throws Exception {
    Fixture f = new Fixture(b -> { }, c -> { }, d -> {
      throw new InterruptedException("shutting down");
    }, null);
    server.plan().next(Fault.status(503));
    OperationCall call = f.client.operation("create-order");
    InterruptedException e = assertThrows(InterruptedException.class,
        () -> call.send(Fixture.post(orders(), "{}"), BodyHandlers.ofString()));
    assertInstanceOf(dev.idem.core.OperationPendingException.class, e.getCause());
    assertFalse(Thread.currentThread().isInterrupted(), "cleared, as InterruptedException promises");
    assertEquals(OperationState.PENDING, f.record(call.operationId()).state());
    assertEquals(1, server.requestCount());
  }

  // The java.net.http surface.
  @ParameterizedTest
  @EnumSource(Mode.class)
  void responseCarriesTheRealAttemptAndTheCallersBodyHandler(Mode mode) throws Exception {
    Fixture f = new Fixture();
    OperationCall call = f.client.operation("create-order");
    IdempotentHttpResponse<byte[]> r = mode.send(f, call, Fixture.post(orders(), "{}"), BodyHandlers.ofByteArray());
    assertEquals(createdBody(1, call.key()), new String(r.body(), java.nio.charset.StandardCharsets.UTF_8));
    assertEquals(HttpClient.Version.HTTP_1_1, r.version());
    assertEquals(orders(), r.uri());
    assertEquals(call.key().value(), r.request().headers().firstValue("Idempotency-Key").orElseThrow(),
        "request() is the attempt that was sent");
    assertEquals("application/json; charset=utf-8", r.headers().firstValue("content-type").orElseThrow());
    assertEquals(call.operationId(), r.operationId());
    assertEquals(OperationState.SUCCEEDED, r.state());
    assertFalse(r.fromJournal());

    IdempotentHttpResponse<java.io.InputStream> again = mode.send(f, call, Fixture.post(orders(), "{}"),
        BodyHandlers.ofInputStream());
    assertTrue(again.fromJournal(), "sending the same call again answers from the journal");
    try (java.io.InputStream in = again.body()) {
      assertEquals(createdBody(1, call.key()), new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
    }
    assertEquals(1, server.requestCount());
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void getAndUntaggedPostPassThroughUntouchedByDefault(Mode mode) throws Exception {
    Fixture f = new Fixture();
    HttpRequest get = HttpRequest.newBuilder(orders()).GET().build();
    HttpResponse<String> g = mode.plain(f, get, BodyHandlers.ofString());
    assertFalse(g instanceof IdempotentHttpResponse);
    HttpResponse<String> p = mode.plain(f, Fixture.post(orders(), "{}"), BodyHandlers.ofString());
    assertFalse(p instanceof IdempotentHttpResponse);
    assertEquals(400, p.statusCode(), "sent without a key, exactly as the app built it");
    assertEquals(List.of(Optional.empty(), Optional.empty()), keysSent(server));
    assertTrue(f.journal.findByState(OperationState.SUCCEEDED, null, 10).isEmpty());
    assertTrue(f.journal.findByState(OperationState.FAILED, null, 10).isEmpty());
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void untaggedPostGetsAFreshKeyWhenConfigured(Mode mode) throws Exception {
    Fixture f = new Fixture(b -> { }, c -> c.untaggedPolicy(UntaggedPolicy.FRESH_KEY));
    server.plan().next(Fault.commitThenDropResponse());
    HttpResponse<String> r = mode.plain(f, Fixture.post(orders(), "{}"), BodyHandlers.ofString());
    IdempotentHttpResponse<String> keyed = assertInstanceOf(IdempotentHttpResponse.class, r);
    assertTrue(keyed.replayed());
    assertEquals("untagged-post", keyed.operationId().operation());
    assertKeyOnEveryRequest(server, keyed.operationId().key(), 2);
    assertEquals(1, server.totalEffects());
  }

  @Test
  void untaggedPostIsRejectedWhenConfigured() {
    Fixture f = new Fixture(b -> { }, c -> c.untaggedPolicy(UntaggedPolicy.REJECT));
    // The same type the OkHttp adapter throws (the adapter contract checks both).
    assertThrows(dev.idem.core.http.UntaggedRequestException.class,
        () -> f.client.send(Fixture.post(orders(), "{}"), BodyHandlers.ofString()));
    java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
        () -> f.client.sendAsync(Fixture.post(orders(), "{}"), BodyHandlers.ofString()).get());
    assertTrue(e.getCause() instanceof dev.idem.core.http.UntaggedRequestException, e.getCause().toString());
    assertEquals(0, server.requestCount());
  }

  @Test
  void cancellingAnAsyncCallDuringBackoffLeavesItPendingWithItsKey() throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.status(503));
    OperationCall call = f.client.operation("create-order");
    CompletableFuture<IdempotentHttpResponse<String>> future =
        call.sendAsync(Fixture.post(orders(), "{}"), BodyHandlers.ofString());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (f.time.pendingTasks() == 0) { // wait until the 503 was classified and a retry scheduled
      assertTrue(System.nanoTime() < deadline, "no retry was scheduled");
      Thread.onSpinWait();
    }
    future.cancel(false);
    f.time.runNextTask();
    assertEquals(OperationState.PENDING, f.record(call.operationId()).state());
    assertEquals(1, server.requestCount(), "no attempt after the cancel");
  }

  // Resume after a restart: the journaled snapshot plus secrets from the app's supplier.
  @Test
  void resumeTransportReappliesSecretsAndKeepsTheKey() throws Exception {
    InMemoryJournal shared = new InMemoryJournal();
    Fixture before = new Fixture(b -> b.journal(shared), c -> { });
    server.plan().next(Fault.dropRequest());
    OperationCall call = before.client.operation("create-order").reference("cart-9")
        .policy(RetryPolicy.builder().maxAttempts(1).build());
    assertThrows(OperationUncertainException.class,
        () -> call.send(Fixture.post(orders(), "{\"sku\":\"F-6\"}"), BodyHandlers.ofString()));

    // "After the restart", moments later on the same virtual clock (an executor on the system clock
    // would find the operation past its age limit and, as it may have reached the server, end it
    // UNCERTAIN unsent): a new executor and client over the same journal.
    IdempotentExecutor after = IdempotentExecutor.builder().journal(shared).clock(before.time.clock()).build();
    IdempotentHttpClient client = IdempotentHttpClient.builder(Fixture.JDK).idempotentExecutor(after).build();
    OperationRecord rec = after.findByReference("default", "cart-9").get(0);
    assertTrue(rec.request().header("Authorization").isEmpty());
    after.redrive(rec.id());
    ResumeTransport resume = client.resumeTransport(s -> Map.of("Authorization", "Bearer fresh"),
        Duration.ofSeconds(5));
    var outcome = after.execute(dev.idem.core.Operation.builder(rec.id().operation(), rec.request())
        .scope(rec.id().scope()).key(rec.id().key()).build(), resume);

    assertEquals(201, outcome.response().status());
    assertKeyOnEveryRequest(server, call.key(), 2);
    ReceivedRequest resumed = server.recordedRequests().get(1);
    assertEquals(Optional.of("Bearer fresh"), resumed.header("Authorization"));
    assertEquals("{\"sku\":\"F-6\"}", resumed.body());
    assertEquals(1, server.effectCount(call.key().value()));
    assertEquals(OperationState.SUCCEEDED, after.find(rec.id()).orElseThrow().state());
  }

  @Test
  void decoratorDelegatesClientSettings() {
    IdempotentHttpClient c = IdempotentHttpClient.builder(Fixture.JDK).build();
    assertSame(Fixture.JDK, c.delegate());
    assertEquals(Fixture.JDK.version(), c.version());
    assertEquals(Fixture.JDK.connectTimeout(), c.connectTimeout());
    assertEquals(Fixture.JDK.followRedirects(), c.followRedirects());
    assertThrows(IllegalArgumentException.class, () -> IdempotentHttpClient.builder(c));
    assertThrows(IllegalArgumentException.class, () -> IdempotentHttpClient.builder(Fixture.JDK).keyHeader("Bad:Name"));
  }
}
