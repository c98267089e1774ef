package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.fail;
import static dev.idem.core.support.ScriptedTransport.slow;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.support.ScriptedTransport.Action;
import dev.idem.core.support.Trials;
import java.io.EOFException;
import java.net.ConnectException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Randomized runs of the executor, through both drivers, on fake time. */
class ExecutorProperties {

  private static RetryPolicy policy(Trials.Gen g) {
    long base = g.longWithEdges(1, 2_000);
    return RetryPolicy.builder()
        .maxAttempts(g.intWithEdges(1, 10))
        .deadline(Duration.ofMillis(g.longWithEdges(1, 120_000)))
        .baseDelay(Duration.ofMillis(base))
        .maxDelay(Duration.ofMillis(base * g.longWithEdges(1, 50)))
        .multiplier(g.doubleBetween(1.0, 4.0))
        .jitter(g.oneOf(Jitter.values()))
        .honorRetryAfter(g.chance(0.8))
        .inFlightMinDelay(Duration.ofMillis(g.longWithEdges(1, 3_000)))
        .maxInFlightAttempts(g.intWithEdges(1, 10))
        .build();
  }

  private static Action retryable(Trials.Gen g) {
    Action a = switch (g.intBetween(0, 9)) {
      case 0 -> fail(new ConnectException("refused"));
      case 1 -> fail(new UnknownHostException("api.example.com"));
      case 2 -> fail(new RequestNotSentException("pool closed", null));
      case 3 -> fail(new SocketTimeoutException("Read timed out"));
      case 4 -> fail(new SocketException("Connection reset"));
      case 5 -> fail(new EOFException());
      case 6 -> status(409);
      default -> g.chance(0.3)
          ? status(g.oneOf(429, 503), Map.of("Retry-After", Long.toString(g.longBetween(0, 40))))
          : status(g.oneOf(408, 425, 429, 500, 502, 503, 504));
    };
    return g.chance(0.5) ? slow(a, Duration.ofMillis(g.longWithEdges(0, 30_000))) : a;
  }

  private static Action anyOutcome(Trials.Gen g) {
    int roll = g.intBetween(0, 9);
    if (roll == 0) {
      return status(g.oneOf(200, 201, 204));
    }
    if (roll == 1) {
      return status(g.oneOf(400, 404, 422, 501));
    }
    return retryable(g);
  }

  private static Harness harness(Trials.Gen g, RetryPolicy policy) {
    Random jitter = new Random(g.nextSeed());
    return new Harness(policy, b -> b.random(jitter::nextDouble));
  }

  /**
   * A transport that always fails retryably: attempts stop at maxAttempts (in-flight answers at
   * their own budget) and before the deadline.
   */
  @Test
  void attemptsNeverExceedMaxAttemptsNorStartPastTheDeadline() {
    Trials.run(250, g -> {
      RetryPolicy policy = policy(g);
      Harness h = harness(g, policy);
      Driver driver = g.oneOf(Driver.values());
      Operation op = Operation.builder("create-order", Requests.order("{\"amount\":1}")).build();
      ScriptedTransport t = h.transport(op);
      for (int i = 0; i < policy.maxAttempts() + policy.maxInFlightAttempts() + 5; i++) {
        t.then(retryable(g));
      }
      Instant start = h.time.now();
      OperationException e;
      try {
        driver.run(h, op, t);
        fail("a transport that always fails cannot succeed");
        return;
      } catch (OperationException x) {
        e = x;
      }
      long inFlight = e.attempts().stream().filter(a -> Integer.valueOf(409).equals(a.status())).count();
      assertTrue(t.count() >= 1, t.count() + " attempts with " + policy);
      assertTrue(t.count() - inFlight <= policy.maxAttempts(), t.count() + " attempts, " + inFlight + " in flight, with "
          + policy);
      assertTrue(inFlight <= policy.maxInFlightAttempts(), inFlight + " in-flight answers with " + policy);
      for (ScriptedTransport.Sent s : t.sent()) {
        assertTrue(Duration.between(start, s.at()).compareTo(policy.deadline()) < 0,
            "attempt " + s.number() + " started " + Duration.between(start, s.at()) + " after the first, " + policy);
      }
      boolean ambiguous = e.attempts().stream().anyMatch(AttemptRecord::isAmbiguous);
      assertEquals(ambiguous ? OperationState.UNCERTAIN : OperationState.FAILED, e.state());
      assertEquals(e.state(), h.state(op));
      assertEquals(t.count(), e.attempts().size());
      assertEquals(0, h.time.pendingTasks());
    });
  }

  /**
   * Random outcomes per attempt: every attempt carries the one key and the same payload, is sent
   * only while the journal holds the operation IN_FLIGHT under this executor (the transport checks),
   * success is reported only after a 2xx, and failure never after an ambiguous attempt.
   */
  @Test
  void oneKeyOnEveryAttemptAndHonestEndings() {
    Trials.run(250, g -> {
      RetryPolicy policy = policy(g);
      Harness h = harness(g, policy);
      Driver driver = g.oneOf(Driver.values());
      Operation op = Operation.builder("create-order", Requests.order("{\"amount\":" + g.intBetween(1, 999) + "}"))
          .scope("tenant-" + g.intBetween(1, 3))
          .build();
      ScriptedTransport t = h.transport(op);
      for (int i = 0; i < policy.maxAttempts() + policy.maxInFlightAttempts(); i++) {
        t.then(anyOutcome(g));
      }
      Object ending;
      try {
        ending = driver.run(h, op, t);
      } catch (IdempotencyException e) {
        ending = e;
      }
      List<ScriptedTransport.Sent> sent = t.sent();
      assertFalse(sent.isEmpty());
      for (ScriptedTransport.Sent s : sent) {
        assertEquals(op.key(), s.key());
        assertEquals(op.request(), s.request());
      }
      OperationRecord r = h.record(op);
      boolean ambiguous = r.hasAmbiguousAttempt();
      assertEquals(sent.size(), r.attempts().size());
      if (ending instanceof Outcome out) {
        assertEquals(OperationState.SUCCEEDED, r.state());
        assertTrue(out.response().isSuccessful());
        assertEquals(Classification.SUCCESS, r.attempts().get(r.attempts().size() - 1).classification());
      } else if (ending instanceof OperationFailedException) {
        assertEquals(OperationState.FAILED, r.state());
        assertFalse(ambiguous, "FAILED reported after an ambiguous attempt");
      } else if (ending instanceof OperationUncertainException) {
        assertEquals(OperationState.UNCERTAIN, r.state());
        assertTrue(ambiguous);
      } else if (ending instanceof IdempotencyKeyReusedException e) {
        assertTrue(e.detectedByServer());
        assertEquals(422, r.attempts().get(r.attempts().size() - 1).status());
        assertEquals(OperationState.FAILED, r.state());
      } else {
        fail("unexpected ending " + ending);
      }
      assertTrue(r.attempts().stream().filter(a -> a.classification() == Classification.SUCCESS).count() <= 1);
      if (r.state() != OperationState.SUCCEEDED) {
        assertTrue(r.attempts().stream().noneMatch(a -> a.classification() == Classification.SUCCESS));
      }
    });
  }
}
