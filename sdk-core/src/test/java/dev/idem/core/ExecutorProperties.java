package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.fail;
import static dev.idem.core.support.ScriptedTransport.slow;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static dev.idem.core.support.Props.chance;
import static dev.idem.core.support.Props.doublesBetween;
import static dev.idem.core.support.Props.intsWithEdges;
import static dev.idem.core.support.Props.longsWithEdges;
import static dev.idem.core.support.Props.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.support.ScriptedTransport.Action;
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
import org.quicktheories.api.Pair;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/** Randomized runs of the executor, through both drivers, on fake time (QuickTheories, with shrinking). */
class ExecutorProperties {

  static Gen<RetryPolicy> policies() {
    Gen<Long> base = longsWithEdges(1, 2_000);
    return base.zip(intsWithEdges(1, 10), longsWithEdges(1, 120_000), longsWithEdges(1, 50),
        (b, attempts, deadline, factor) -> RetryPolicy.builder().maxAttempts(attempts)
            .deadline(Duration.ofMillis(deadline)).baseDelay(Duration.ofMillis(b))
            .maxDelay(Duration.ofMillis(b * factor)))
        .zip(doublesBetween(1.0, 4.0), Generate.enumValues(Jitter.class), chance(80),
            (builder, multiplier, jitter, honor) -> builder.multiplier(multiplier).jitter(jitter)
                .honorRetryAfter(honor))
        .zip(longsWithEdges(1, 3_000), intsWithEdges(1, 10),
            (builder, inFlightMin, inFlightMax) -> builder.inFlightMinDelay(Duration.ofMillis(inFlightMin))
                .maxInFlightAttempts(inFlightMax).build());
  }

  /**
   * What one attempt meets, as data (so that a shrunk failure prints readably and every run builds
   * fresh exceptions): a kind, the status or Retry-After it carries, and the latency it adds.
   */
  record Act(int kind, int code, long retryAfterSeconds, long latencyMs) {
    Action toAction() {
      Action a = switch (kind) {
        case 0 -> fail(new ConnectException("refused"));
        case 1 -> fail(new UnknownHostException("api.example.com"));
        case 2 -> fail(new RequestNotSentException("pool closed", null));
        case 3 -> fail(new SocketTimeoutException("Read timed out"));
        case 4 -> fail(new SocketException("Connection reset"));
        case 5 -> fail(new EOFException());
        case 6 -> status(409);
        case 7 -> status(code, Map.of("Retry-After", Long.toString(retryAfterSeconds)));
        default -> status(code);
      };
      return latencyMs > 0 ? slow(a, Duration.ofMillis(latencyMs)) : a;
    }
  }

  private static final List<Integer> RETRYABLE_STATUSES = List.of(408, 425, 429, 500, 502, 503, 504);

  /**
   * A retryable failure: an exception (safe or ambiguous), 409 in flight, or a retried status
   * (TRANSIENT, or AMBIGUOUS for 500, 502 and 504).
   */
  static Gen<Act> retryable() {
    Gen<Integer> kind = integers().between(0, 9).zip(chance(30), (k, hinted) -> k <= 6 ? k : hinted ? 7 : 8);
    Gen<Long> latency = chance(50).zip(longsWithEdges(0, 30_000), (slow, ms) -> slow ? ms : 0L);
    return kind.zip(Generate.pick(RETRYABLE_STATUSES), longs().between(0, 40), latency,
        (k, st, ra, lat) -> new Act(k, k == 7 ? (st % 2 == 0 ? 429 : 503) : st, ra, lat));
  }

  /** Any outcome: one in ten a success, one in ten a permanent status, else retryable. */
  static Gen<Act> anyOutcome() {
    Gen<Act> success = Generate.pick(List.of(200, 201, 204)).map(st -> new Act(8, st, 0, 0));
    Gen<Act> permanent = Generate.pick(List.of(400, 404, 422, 501)).map(st -> new Act(8, st, 0, 0));
    return Generate.frequency(Pair.of(1, success), Pair.of(1, permanent), Pair.of(8, retryable()));
  }

  private static Harness harness(long jitterSeed, RetryPolicy policy) {
    Random jitter = new Random(jitterSeed);
    return new Harness(policy, b -> b.random(jitter::nextDouble));
  }

  private static ScriptedTransport script(Harness h, Operation op, List<Act> acts) {
    ScriptedTransport t = h.transport(op);
    acts.forEach(a -> t.then(a.toAction()));
    return t;
  }

  /**
   * A transport that always fails retryably: attempts stop at maxAttempts (in-flight answers at
   * their own budget) and before the deadline. 25 scripted answers cover maxAttempts (at most 10)
   * plus maxInFlightAttempts (at most 10) plus five.
   */
  @Test
  void attemptsNeverExceedMaxAttemptsNorStartPastTheDeadline() {
    qt(250).forAll(policies(), Generate.enumValues(Driver.class), lists().of(retryable()).ofSize(25), longs().all())
        .checkAssert((policy, driver, acts, seed) -> {
          Harness h = harness(seed, policy);
          Operation op = Operation.builder("create-order", Requests.order("{\"amount\":1}")).build();
          ScriptedTransport t = script(h, op, acts);
          Instant start = h.time.now();
          OperationException e;
          try {
            driver.run(h, op, t);
            fail("a transport that always fails cannot succeed");
            return;
          } catch (OperationException x) {
            e = x;
          } catch (IdempotencyException x) {
            throw new AssertionError(x);
          }
          long inFlight = e.attempts().stream().filter(a -> Integer.valueOf(409).equals(a.status())).count();
          assertTrue(t.count() >= 1, t.count() + " attempts with " + policy);
          assertTrue(t.count() - inFlight <= policy.maxAttempts(), t.count() + " attempts, " + inFlight
              + " in flight, with " + policy);
          assertTrue(inFlight <= policy.maxInFlightAttempts(), inFlight + " in-flight answers with " + policy);
          for (ScriptedTransport.Sent s : t.sent()) {
            assertTrue(Duration.between(start, s.at()).compareTo(policy.deadline()) < 0,
                "attempt " + s.number() + " started " + Duration.between(start, s.at()) + " after the first, " + policy);
          }
          boolean ambiguous = e.attempts().stream().anyMatch(AttemptRecord::isAmbiguous);
          assertEquals(ambiguous ? OperationState.UNCERTAIN : OperationState.FAILED, e.state());
          assertEquals(e.state(), state(h, op));
          assertEquals(t.count(), e.attempts().size());
          assertEquals(0, h.time.pendingTasks());
        });
  }

  /** One operation's request: its amount and tenant. */
  record Order(int amount, int tenant) {}

  /**
   * Random outcomes per attempt: every attempt carries the one key and the same payload, is sent
   * only while the journal holds the operation IN_FLIGHT under this executor (the transport checks),
   * success is reported only after a 2xx, and failure never after an ambiguous attempt.
   */
  @Test
  void oneKeyOnEveryAttemptAndHonestEndings() {
    Gen<Order> orders = integers().between(1, 999).zip(integers().between(1, 3), Order::new);
    qt(250).forAll(policies(), Generate.enumValues(Driver.class), lists().of(anyOutcome()).ofSize(20),
        orders.zip(longs().all(), (o, seed) -> new Object[] {o, seed}).describedAs(a -> a[0] + " seed " + a[1]))
        .checkAssert((policy, driver, acts, orderAndSeed) -> {
          Order order = (Order) orderAndSeed[0];
          Harness h = harness((Long) orderAndSeed[1], policy);
          Operation op = Operation.builder("create-order", Requests.order("{\"amount\":" + order.amount() + "}"))
              .scope("tenant-" + order.tenant())
              .build();
          ScriptedTransport t = script(h, op, acts);
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
          OperationRecord r = record(h, op);
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

  private static OperationRecord record(Harness h, Operation op) {
    try {
      return h.record(op);
    } catch (IdempotencyException e) {
      throw new AssertionError(e);
    }
  }

  private static OperationState state(Harness h, Operation op) {
    return record(h, op).state();
  }
}
