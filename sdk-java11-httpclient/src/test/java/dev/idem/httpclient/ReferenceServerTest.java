package dev.idem.httpclient;

import dev.idem.core.KeyHeaderFormat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.Sleeper;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The required scenarios against the testkit's reference {@link IdempotentServer}: its atomic
 * claim, fingerprint check, stored replies and effect counters are the server half of the
 * protocol, so these tests prove the decorator against the real thing rather than a stand-in.
 */
class ReferenceServerTest {
  private final IdempotentServer server = IdempotentServer.start();

  @AfterEach
  void stop() {
    server.close();
  }

  private HttpRequest order(String json) {
    return Fixture.post(server.url("/orders"), json);
  }

  private HttpRequest order(String json, Duration timeout) {
    return HttpRequest.newBuilder(server.url("/orders")).timeout(timeout)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json)).build();
  }

  private void assertKeyOnEveryRequest(IdempotencyKey key, int requests) {
    List<ReceivedRequest> got = server.recordedRequests();
    assertEquals(requests, got.size(), "requests on the wire");
    got.forEach(r -> assertEquals(key.value(), r.keyHeader().orElseThrow()));
  }

  /** A hook for the wait after a 409 (a long one): let the server finish in real time first. */
  private Sleeper untilSettled(IdempotencyKey key, Duration atLeast) {
    return d -> {
      if (d.compareTo(atLeast) >= 0) {
        assertTrue(server.awaitEffects(key.value(), 1, Duration.ofSeconds(5)));
      }
    };
  }

  private Fixture withHook(Mode mode, Sleeper hook) {
    return new Fixture(b -> { }, c -> { }, mode == Mode.SYNC ? hook : null, mode == Mode.ASYNC ? hook : null);
  }

  @Test
  void eightThreadsOneKeyOneEffect() throws Exception {
    Fixture f = new Fixture();
    IdempotencyKey key = IdempotencyKey.generate();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<IdempotentHttpResponse<String>>> calls = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        calls.add(pool.submit(() -> {
          go.await();
          return f.client.operation("create-order").key(key).send(order("{\"sku\":\"A\"}"), BodyHandlers.ofString());
        }));
      }
      go.countDown();
      for (Future<IdempotentHttpResponse<String>> c : calls) {
        assertTrue(c.get(15, TimeUnit.SECONDS).body().contains("\"id\":\"ord_1\""));
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(1, server.effectCount(key.value()));
  }

  @Test
  void eightAsyncCallsOneKeyOneEffect() throws Exception {
    Fixture f = new Fixture();
    IdempotencyKey key = IdempotencyKey.generate();
    List<CompletableFuture<IdempotentHttpResponse<String>>> calls = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      calls.add(f.client.operation("create-order").key(key).sendAsync(order("{\"sku\":\"A\"}"), BodyHandlers.ofString()));
    }
    for (CompletableFuture<IdempotentHttpResponse<String>> c : calls) {
      assertTrue(f.await(c).body().contains("\"id\":\"ord_1\""));
    }
    assertEquals(1, server.effectCount(key.value()));
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void reusedKeyIsRefusedLocallyThenByTheServer(Mode mode) throws Exception {
    Fixture f = new Fixture();
    IdempotencyKey key = IdempotencyKey.generate();
    mode.send(f, f.client.operation("create-order").key(key), order("{\"qty\":1}"), BodyHandlers.ofString());
    assertFalse(assertThrows(IdempotencyKeyReusedException.class, () -> mode.send(f,
        f.client.operation("create-order").key(key), order("{\"qty\":2}"), BodyHandlers.ofString()))
        .detectedByServer());
    assertEquals(1, server.requestCount());

    Fixture other = new Fixture();
    assertTrue(assertThrows(IdempotencyKeyReusedException.class, () -> mode.send(other,
        other.client.operation("create-order").key(key), order("{\"qty\":2}"), BodyHandlers.ofString()))
        .detectedByServer());
    assertEquals(2, server.requestCount());
    assertEquals(1, server.effectCount(key.value()));
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void lostResponseIsReplayed(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.commitThenDropResponse());
    OperationCall call = f.client.operation("create-order");
    IdempotentHttpResponse<String> r = mode.send(f, call, order("{\"sku\":\"B\"}"), BodyHandlers.ofString());
    assertTrue(r.replayed());
    assertTrue(r.body().contains("\"id\":\"ord_1\""), r.body());
    assertEquals(1, server.effectCount(call.key().value()));
    assertKeyOnEveryRequest(call.key(), 2);
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void droppedRequestIsProcessedOnceOnRetry(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.dropRequest());
    OperationCall call = f.client.operation("create-order");
    IdempotentHttpResponse<String> r = mode.send(f, call, order("{}"), BodyHandlers.ofString());
    assertEquals(201, r.statusCode());
    assertFalse(r.replayed());
    assertEquals(1, server.effectCount(call.key().value()));
    assertKeyOnEveryRequest(call.key(), 2);
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void answerAfterTheTimeoutIsReplayed(Mode mode) throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    server.plan().next(Fault.commitThenDelayResponse(Duration.ofMillis(600)));
    Fixture f = withHook(mode, untilSettled(key, Duration.ZERO));
    OperationCall call = f.client.operation("create-order").key(key);
    IdempotentHttpResponse<String> r = mode.send(f, call, order("{}", Duration.ofMillis(150)),
        BodyHandlers.ofString());
    assertTrue(r.replayed());
    assertEquals(1, server.effectCount(key.value()));
    assertKeyOnEveryRequest(key, 2);
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void inFlightConflictWaitsRetryAfterThenReplays(Mode mode) throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    server.plan().next(Fault.slowProcessing(Duration.ofMillis(600)));
    Fixture f = withHook(mode, untilSettled(key, Duration.ofSeconds(1)));
    OperationCall call = f.client.operation("create-order").key(key);
    IdempotentHttpResponse<String> r = mode.send(f, call, order("{}", Duration.ofMillis(150)),
        BodyHandlers.ofString());
    assertTrue(r.replayed());
    assertEquals(1, server.effectCount(key.value()));
    assertKeyOnEveryRequest(key, 3);
    assertEquals(Duration.ofSeconds(1), f.time.sleeps().get(1), "Retry-After: 1 on the 409");
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void unavailableThreeTimesThenSuccess(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().forNext(3, Fault.status(503));
    OperationCall call = f.client.operation("create-order");
    assertEquals(201, mode.send(f, call, order("{}"), BodyHandlers.ofString()).statusCode());
    assertEquals(1, server.effectCount(call.key().value()));
    assertKeyOnEveryRequest(call.key(), 4);
    assertEquals(3, f.time.sleeps().size());
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void retryAfterSecondsAndDatesAreHonoured(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.tooManyRequests(Duration.ofSeconds(4)));
    assertEquals(201, mode.send(f, f.client.operation("a"), order("{}"), BodyHandlers.ofString()).statusCode());
    assertEquals(List.of(Duration.ofSeconds(4)), f.time.sleeps());

    // An HTTP-date hint, dated by a server that shares the test's virtual clock.
    try (IdempotentServer dated = IdempotentServer.builder().clock(f.time.clock()).start()) {
      dated.plan().next(Fault.tooManyRequestsUntil(Duration.ofSeconds(3)));
      HttpRequest request = Fixture.post(dated.url("/orders"), "{}");
      assertEquals(201, mode.send(f, f.client.operation("b"), request, BodyHandlers.ofString()).statusCode());
      assertEquals(List.of(Duration.ofSeconds(4), Duration.ofSeconds(3)), f.time.sleeps());
      assertEquals(1, dated.totalEffects());
    }
    assertEquals(1, server.totalEffects());
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void permanentFailureAndAmbiguousExhaustion(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.status(404));
    OperationCall notFound = f.client.operation("create-order");
    IdempotentHttpResponse<String> r = mode.send(f, notFound, order("{}"), BodyHandlers.ofString());
    assertEquals(404, r.statusCode());
    assertEquals(OperationState.FAILED, f.record(notFound.operationId()).state());
    assertEquals(1, server.requestCount(), "no retry");

    server.plan().forNext(Fixture.POLICY.maxAttempts(), Fault.dropRequest());
    OperationCall lost = f.client.operation("create-order");
    assertThrows(OperationUncertainException.class, () -> mode.send(f, lost, order("{}"), BodyHandlers.ofString()));
    assertEquals(OperationState.UNCERTAIN, f.record(lost.operationId()).state());
    assertEquals(0, server.totalEffects());
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void errorAfterCommitIsRetriedIntoTheReplay(Mode mode) throws Exception {
    Fixture f = new Fixture();
    server.plan().next(Fault.commitThenStatus(500));
    OperationCall call = f.client.operation("create-order");
    IdempotentHttpResponse<String> r = mode.send(f, call, order("{}"), BodyHandlers.ofString());
    assertTrue(r.replayed(), "a 500 did not mean nothing happened");
    assertEquals(1, server.effectCount(call.key().value()));
  }

  @Test
  void structuredFieldKeyIsTheSameKeyToTheServer() throws Exception {
    Fixture f = new Fixture(b -> { }, c -> c.keyFormat(KeyHeaderFormat.STRUCTURED_STRING));
    server.plan().next(Fault.commitThenDropResponse());
    OperationCall call = f.client.operation("create-order");
    assertTrue(call.send(order("{}"), BodyHandlers.ofString()).replayed());
    server.recordedRequests().forEach(r -> assertEquals("\"" + call.key().value() + "\"", r.keyHeader().orElseThrow()));
    assertEquals(1, server.effectCount(call.key().value()));
  }
}
