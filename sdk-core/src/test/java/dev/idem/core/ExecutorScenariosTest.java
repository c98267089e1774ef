package dev.idem.core;

import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import static dev.idem.core.support.ScriptedTransport.fail;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** One scenario table, run through both the synchronous and the asynchronous driver. */
class ExecutorScenariosTest {
  private final Harness h = new Harness();
  private final Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100,\"currency\":\"EUR\"}"))
      .scope("tenant-1")
      .build();

  private static void assertSameKeyAndPayload(Operation op, ScriptedTransport t) {
    for (ScriptedTransport.Sent s : t.sent()) {
      assertEquals(op.key(), s.key(), "attempt " + s.number() + " used another key");
      assertEquals(op.request(), s.request(), "attempt " + s.number() + " sent another payload");
    }
  }

  private static void assertCarries(OperationException e, Operation op, OperationState state, int attempts) {
    assertEquals(op.key(), e.key());
    assertEquals(op.id(), e.operationId());
    assertEquals(state, e.state());
    assertEquals(attempts, e.attempts().size(), e.attempts().toString());
    for (int i = 0; i < attempts; i++) {
      assertEquals(i + 1, e.attempts().get(i).number());
    }
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void successOnTheFirstTry(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(201, Map.of("Content-Type", "application/json"), "{\"id\":7}"));
    Outcome out = d.run(h, op, t);
    assertEquals(201, out.response().status());
    assertArrayEquals("{\"id\":7}".getBytes(StandardCharsets.UTF_8), out.response().body());
    assertEquals(op.id(), out.operationId());
    assertFalse(out.fromJournal());
    assertFalse(out.replayed());
    assertEquals(1, t.count());
    assertEquals(1, out.attempts().size());
    assertEquals(Classification.SUCCESS, out.attempts().get(0).classification());
    assertEquals(OperationState.SUCCEEDED, h.state(op));
    assertEquals(out.response(), h.record(op).response());
    assertTrue(h.time.sleeps().isEmpty());
    assertSameKeyAndPayload(op, t);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void replayedResponseIsSurfaced(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(200, Map.of("Idempotent-Replayed", "true")));
    assertTrue(d.run(h, op, t).replayed());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void twoServiceUnavailableThenSuccess(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(503), status(503), status(200));
    Outcome out = d.run(h, op, t);
    assertEquals(200, out.response().status());
    assertEquals(3, t.count());
    assertSameKeyAndPayload(op, t);
    assertEquals(List.of(Duration.ofMillis(100), Duration.ofMillis(200)), h.time.sleeps());
    List<AttemptRecord> a = out.attempts();
    assertEquals(3, a.size());
    assertEquals(Classification.TRANSIENT, a.get(0).classification());
    assertEquals(503, a.get(0).status());
    assertEquals(Duration.ofMillis(100), a.get(0).delay());
    assertTrue(a.get(0).decision().contains("backoff"), a.get(0).decision());
    assertTrue(a.get(0).reason().contains("503"), a.get(0).reason());
    assertEquals(Duration.ofMillis(200), a.get(1).delay());
    assertEquals(Classification.SUCCESS, a.get(2).classification());
    assertEquals(Duration.ZERO, a.get(2).delay());
    // the waits really happened between the attempts, on the clock
    List<ScriptedTransport.Sent> sent = t.sent();
    assertEquals(Duration.ofMillis(100), Duration.between(sent.get(0).at(), sent.get(1).at()));
    assertEquals(Duration.ofMillis(200), Duration.between(sent.get(1).at(), sent.get(2).at()));
    // every claim bumped the fencing generation
    assertEquals(List.of(1L, 2L, 3L), a.stream().map(AttemptRecord::generation).toList());
    OperationRecord r = h.record(op);
    assertEquals(OperationState.SUCCEEDED, r.state());
    assertEquals(a, r.attempts());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void safeFailuresUntilExhaustionEndFailed(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).otherwise(fail(new ConnectException("Connection refused")));
    OperationFailedException e = assertThrows(OperationFailedException.class, () -> d.run(h, op, t));
    assertEquals(4, t.count());
    assertSameKeyAndPayload(op, t);
    assertCarries(e, op, OperationState.FAILED, 4);
    assertTrue(e.attempts().stream().allMatch(x -> x.classification() == Classification.SAFE));
    assertEquals(ConnectException.class.getName(), e.attempts().get(0).exceptionClass());
    assertTrue(e.attempts().get(3).decision().contains("exhausted"), e.attempts().get(3).decision());
    assertEquals(OperationState.FAILED, h.state(op));
    assertEquals(List.of(Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(400)), h.time.sleeps());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void readTimeoutsUntilExhaustionEndUncertainNeverFailed(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).otherwise(fail(new SocketTimeoutException("Read timed out")));
    OperationUncertainException e = assertThrows(OperationUncertainException.class, () -> d.run(h, op, t));
    assertEquals(4, t.count());
    assertSameKeyAndPayload(op, t);
    assertCarries(e, op, OperationState.UNCERTAIN, 4);
    assertTrue(e.attempts().stream().allMatch(AttemptRecord::isAmbiguous));
    assertEquals(OperationState.UNCERTAIN, h.state(op));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void conflictInFlightWaitsBeyondMaxAttemptsAndEndsUncertainAtTheDeadline(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).otherwise(status(409));
    OperationUncertainException e = assertThrows(OperationUncertainException.class, () -> d.run(h, op, t));
    // maxAttempts is 4, but in-flight answers have their own budget (20): the 30 s deadline ends it.
    assertCarries(e, op, OperationState.UNCERTAIN, 8);
    assertSameKeyAndPayload(op, t);
    assertEquals(409, e.lastResponse().orElseThrow().status());
    assertEquals(List.of(1, 2, 4, 5, 5, 5, 5).stream().map(Duration::ofSeconds).toList(), h.time.sleeps(),
        "at least 1 s, doubling, capped at maxDelay");
    assertTrue(e.attempts().get(7).decision().contains("deadline"), e.attempts().get(7).decision());
    assertEquals(OperationState.UNCERTAIN, h.state(op));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void conflictInFlightStopsAtTheInFlightBudget(Driver d) throws Exception {
    Harness small = new Harness(Harness.POLICY.toBuilder().maxInFlightAttempts(3)
        .inFlightMinDelay(Duration.ofMillis(300)).build(), b -> {});
    ScriptedTransport t = small.transport(op).otherwise(status(409));
    OperationUncertainException e = assertThrows(OperationUncertainException.class, () -> d.run(small, op, t));
    assertCarries(e, op, OperationState.UNCERTAIN, 3);
    assertEquals(List.of(Duration.ofMillis(300), Duration.ofMillis(600)), small.time.sleeps());
    assertTrue(e.attempts().get(2).decision().contains("in-flight attempts exhausted (3 of 3)"),
        e.attempts().get(2).decision());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void transientStatusesEndFailedUnlessAnAttemptWasAmbiguous(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).otherwise(status(503));
    assertThrows(OperationFailedException.class, () -> d.run(h, op, t));
    assertEquals(OperationState.FAILED, h.state(op));

    Operation op2 = Operation.builder("create-order", Requests.order("{\"amount\":2}")).build();
    ScriptedTransport t2 = h.transport(op2).then(fail(new SocketTimeoutException())).otherwise(status(503));
    assertThrows(OperationUncertainException.class, () -> d.run(h, op2, t2));
    assertEquals(OperationState.UNCERTAIN, h.state(op2));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void permanentBadRequestFailsAfterExactlyOneAttempt(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(400, Map.of(), "{\"error\":\"amount must be positive\"}"))
        .otherwise(status(200));
    OperationFailedException e = assertThrows(OperationFailedException.class, () -> d.run(h, op, t));
    assertEquals(1, t.count());
    assertCarries(e, op, OperationState.FAILED, 1);
    assertEquals(400, e.lastResponse().orElseThrow().status());
    assertEquals(OperationState.FAILED, h.state(op));
    assertTrue(h.time.sleeps().isEmpty());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void unprocessableMeansTheServerSawTheKeyReused(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(422)).otherwise(status(200));
    IdempotencyKeyReusedException e = assertThrows(IdempotencyKeyReusedException.class, () -> d.run(h, op, t));
    assertTrue(e.detectedByServer());
    assertEquals(op.id(), e.operationId());
    assertEquals(1, t.count());
    assertEquals(OperationState.FAILED, h.state(op));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void retryAfterIsHonoured(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(429, Map.of("Retry-After", "3")), status(200));
    Outcome out = d.run(h, op, t);
    assertEquals(2, t.count());
    Duration waited = h.time.sleeps().get(0);
    assertTrue(waited.compareTo(Duration.ofSeconds(3)) >= 0, "waited only " + waited);
    assertTrue(out.attempts().get(0).delay().compareTo(Duration.ofSeconds(3)) >= 0);
    assertTrue(out.attempts().get(0).decision().contains("Retry-After"), out.attempts().get(0).decision());
    Duration between = Duration.between(t.sent().get(0).at(), t.sent().get(1).at());
    assertTrue(between.compareTo(Duration.ofSeconds(3)) >= 0, "second attempt came after " + between);
  }

  // Issue 15: a hint beyond maxDelay is capped (as the README says), not a reason to stop.
  @ParameterizedTest
  @EnumSource(Driver.class)
  void retryAfterBeyondMaxDelayWaitsMaxDelayThenRetriesWithTheSameKey(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(503, Map.of("Retry-After", "120"))).otherwise(status(200));
    Outcome out = d.run(h, op, t);
    assertEquals(2, t.count());
    assertEquals(List.of(Harness.POLICY.maxDelay()), h.time.sleeps());
    assertTrue(out.attempts().get(0).decision().contains("capped"), out.attempts().get(0).decision());
    assertTrue(t.sent().stream().allMatch(s -> s.key().equals(op.key())));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void retryAfterWhoseCappedWaitEndsPastTheDeadlineStopsWithoutSleepingPastIt(Driver d) throws Exception {
    Harness short_ = new Harness(Harness.POLICY.toBuilder().deadline(Duration.ofSeconds(4)).build(), b -> {});
    Operation o = Operation.builder("create-order", op.request()).build();
    Instant start = short_.time.now();
    ScriptedTransport t = short_.transport(o).then(status(503, Map.of("Retry-After", "120"))).otherwise(status(200));
    OperationFailedException e = assertThrows(OperationFailedException.class, () -> d.run(short_, o, t));
    assertEquals(1, t.count());
    assertTrue(short_.time.sleeps().isEmpty(), "slept " + short_.time.sleeps());
    assertTrue(Duration.between(start, short_.time.now()).compareTo(Duration.ofSeconds(4)) < 0);
    assertTrue(e.attempts().get(0).decision().contains("Retry-After"), e.attempts().get(0).decision());
    assertEquals(OperationState.FAILED, short_.state(o));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void permanentStatusAfterAnAmbiguousAttemptIsUncertain(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).then(fail(new SocketTimeoutException("Read timed out")), status(400));
    OperationUncertainException e = assertThrows(OperationUncertainException.class, () -> d.run(h, op, t));
    assertCarries(e, op, OperationState.UNCERTAIN, 2);
    assertEquals(OperationState.UNCERTAIN, h.state(op));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void sameKeyWithAnotherBodyIsRefusedBeforeSending(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(200));
    d.run(h, op, t);
    Operation other = Operation.builder("create-order", Requests.order("{\"amount\":999,\"currency\":\"EUR\"}"))
        .scope("tenant-1").key(op.key()).build();
    ScriptedTransport t2 = h.transport(other).otherwise(status(200));
    IdempotencyKeyReusedException e = assertThrows(IdempotencyKeyReusedException.class, () -> d.run(h, other, t2));
    assertFalse(e.detectedByServer());
    assertEquals(0, t2.count());
    assertEquals(OperationState.SUCCEEDED, h.state(op));

    // also while the first is still pending: nothing sent for the impostor
    Operation pending = Operation.builder("create-order", Requests.order("{\"a\":1}")).build();
    h.journal.begin(new NewOperation(pending.id(), null, Fingerprinter.defaults().fingerprint(pending.request()),
        pending.request(), h.time.now()));
    Operation impostor = Operation.builder("create-order", Requests.order("{\"a\":2}")).key(pending.key()).build();
    ScriptedTransport t3 = h.transport(impostor).otherwise(status(200));
    assertThrows(IdempotencyKeyReusedException.class, () -> d.run(h, impostor, t3));
    assertEquals(0, t3.count());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void sameKeyWithAnEquivalentJsonBodyIsTheSameOperation(Driver d) throws Exception {
    d.run(h, op, h.transport(op).then(status(200)));
    Operation respelled = Operation.builder("create-order", Requests.order("{ \"currency\": \"EUR\", \"amount\": 1e2 }"))
        .scope("tenant-1").key(op.key()).build();
    ScriptedTransport t2 = h.transport(respelled).otherwise(status(500));
    assertTrue(d.run(h, respelled, t2).fromJournal());
    assertEquals(0, t2.count());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void succeededOperationIsAnsweredFromTheJournal(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(200, Map.of(), "done")).otherwise(status(500));
    Outcome first = d.run(h, op, t);
    Outcome again = d.run(h, op, t);
    assertEquals(1, t.count());
    assertTrue(again.fromJournal());
    assertEquals(first.response(), again.response());
    assertEquals(first.attempts(), again.attempts());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void finishedFailuresAreAnsweredFromTheJournalUntilRedriven(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(404), status(201));
    assertThrows(OperationFailedException.class, () -> d.run(h, op, t));
    OperationFailedException again = assertThrows(OperationFailedException.class, () -> d.run(h, op, t));
    assertEquals(1, t.count());
    assertEquals(1, again.attempts().size());
    OperationRecord redriven = h.executor.redrive(op.id());
    assertEquals(OperationState.PENDING, redriven.state());
    Outcome out = d.run(h, op, t);
    assertEquals(201, out.response().status());
    assertEquals(2, t.count());
    assertSameKeyAndPayload(op, t);
    assertEquals(2, out.attempts().size());
    assertEquals(2, out.attempts().get(1).number());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void secretHeadersNeverReachTheJournalButReachTheWire(Driver d) throws Exception {
    Harness hs = new Harness(Harness.POLICY, b -> b.secretHeaders(Set.of("X-Api-Secret")));
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example.com/v1/orders"))
        .header("Authorization", "Bearer sk_live_123")
        .header("Cookie", "session=cookie-secret-value")
        .header("Proxy-Authorization", "Basic eHk=")
        .header("x-api-secret", "s3cr3t")
        .header("X-Request-Source", "checkout")
        .body("{\"amount\":1}".getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
    Operation secretOp = Operation.builder("create-order", request).build();
    ScriptedTransport t = hs.transport(secretOp).then(fail(new ConnectException()), status(200));
    d.run(hs, secretOp, t);
    RequestSnapshot journaled = hs.record(secretOp).request();
    assertEquals(Set.of("x-request-source"), journaled.headers().keySet());
    for (ScriptedTransport.Sent s : t.sent()) {
      assertEquals("Bearer sk_live_123", s.request().header("authorization").orElseThrow());
      assertEquals("session=cookie-secret-value", s.request().header("cookie").orElseThrow());
      assertEquals("s3cr3t", s.request().header("X-Api-Secret").orElseThrow());
    }
    // Markers that hex keys and fingerprints cannot contain by chance ("abc" once did: a key's
    // random hex digits hold it in about one key of two hundred).
    String everything = hs.record(secretOp).toString() + journaled.headers();
    assertFalse(everything.contains("sk_live_123") || everything.contains("s3cr3t")
        || everything.contains("cookie-secret-value"));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void perOperationPolicyWins(Driver d) throws Exception {
    Operation once = Operation.builder("create-order", Requests.order("{}"))
        .policy(Harness.POLICY.toBuilder().maxAttempts(1).build()).build();
    ScriptedTransport t = h.transport(once).otherwise(status(503));
    assertThrows(OperationFailedException.class, () -> d.run(h, once, t));
    assertEquals(1, t.count());
  }

  // Issue 15: a RuntimeException after writing used to leave the operation PENDING as "interrupted
  // or cancelled". It is an ambiguous attempt, retried with the same key; the message names it.
  @ParameterizedTest
  @EnumSource(Driver.class)
  void transportBugAfterWritingIsAnAmbiguousAttemptAndEndsUncertain(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).otherwise(status(200));
    Transport sync = (r, k) -> {
      t.send(r, k);
      throw new IllegalStateException("bug in the adapter after writing");
    };
    AsyncTransport async = (r, k) -> {
      t.sendAsync(r, k);
      throw new IllegalStateException("bug in the adapter after writing");
    };
    OperationUncertainException e = assertThrows(OperationUncertainException.class, () -> {
      if (d == Driver.SYNC) {
        h.executor.execute(op, sync);
      } else {
        java.util.concurrent.CompletableFuture<Outcome> f = h.executor.executeAsync(op, async);
        h.time.runUntilIdle();
        Driver.join(f);
      }
    });
    assertEquals(OperationState.UNCERTAIN, h.state(op));
    assertTrue(h.record(op).hasAmbiguousAttempt(), "the attempt may have gone out: it must count as ambiguous");
    assertTrue(e.getMessage().contains("java.lang.IllegalStateException"), e.getMessage());
    assertEquals(Harness.POLICY.maxAttempts(), t.count());
    assertTrue(t.sent().stream().allMatch(s -> s.key().equals(op.key())));
    assertEquals(op.key(), e.key());
  }
}
