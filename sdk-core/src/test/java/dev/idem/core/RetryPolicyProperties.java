package dev.idem.core;

import static dev.idem.core.support.Props.chance;
import static dev.idem.core.support.Props.doublesBetween;
import static dev.idem.core.support.Props.intsWithEdges;
import static dev.idem.core.support.Props.longsWithEdges;
import static dev.idem.core.support.Props.qt;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.idem.core.spi.RetryDecision;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/** Properties of {@link RetryPolicy#decide} (QuickTheories, with shrinking). */
class RetryPolicyProperties {

  static Gen<RetryPolicy> policies() {
    Gen<Long> base = longsWithEdges(1, 5_000);
    return base.zip(intsWithEdges(1, 50), longsWithEdges(1, 600_000), longsWithEdges(1, 100),
        (b, attempts, deadline, factor) -> RetryPolicy.builder().maxAttempts(attempts)
            .deadline(Duration.ofMillis(deadline)).baseDelay(Duration.ofMillis(b))
            .maxDelay(Duration.ofMillis(b * factor)))
        .zip(doublesBetween(1.0, 10.0), Generate.enumValues(Jitter.class), chance(70),
            (builder, multiplier, jitter, honor) -> builder.multiplier(multiplier).jitter(jitter)
                .honorRetryAfter(honor).build());
  }

  static Gen<Optional<Duration>> hints(long maxMs) {
    return chance(40).zip(longsWithEdges(0, maxMs),
        (present, ms) -> present ? Optional.of(Duration.ofMillis(ms)) : Optional.<Duration>empty());
  }

  /** One call of decide: the policy, what the caller tells it, and a seed for the jitter draws. */
  record Decision(RetryPolicy policy, int attemptsMade, Duration elapsed, Duration previous,
      Optional<Duration> hint, long jitterSeed) {}

  static Gen<Decision> decisions() {
    return policies().flatMap(p -> intsWithEdges(1, 100_000, p.maxAttempts() - 1, p.maxAttempts())
        .zip(longsWithEdges(0, 700_000, p.deadline().toMillis()), longsWithEdges(0, 1_000_000), hints(200_000),
            (attempts, elapsed, previous, hint) -> new Decision(p, attempts, Duration.ofMillis(elapsed),
                Duration.ofMillis(previous), hint, 0))
        .zip(longs().all(), (d, seed) -> new Decision(d.policy(), d.attemptsMade(), d.elapsed(), d.previous(),
            d.hint(), seed)));
  }

  @Test
  void everyDelayLiesBetweenZeroAndTheCapAndEndsBeforeTheDeadline() {
    qt(3000).forAll(decisions()).checkAssert(c -> {
      RetryPolicy policy = c.policy();
      Random random = new Random(c.jitterSeed());
      RetryDecision d = policy.decide(c.attemptsMade(), c.elapsed(), c.previous(), c.hint(), random::nextDouble);
      assertFalse(d.delay().isNegative());
      assertTrue(d.delay().compareTo(policy.maxDelay()) <= 0, d + " exceeds " + policy.maxDelay());
      if (d.retry()) {
        assertTrue(c.attemptsMade() < policy.maxAttempts());
        assertTrue(c.elapsed().plus(d.delay()).compareTo(policy.deadline()) < 0, d + " ends past " + policy.deadline());
        if (policy.honorRetryAfter() && c.hint().isPresent()) {
          Duration hint = c.hint().get();
          Duration floor = hint.compareTo(policy.maxDelay()) > 0 ? policy.maxDelay() : hint;
          assertTrue(d.delay().compareTo(floor) >= 0, "Retry-After floor ignored: " + d);
        }
      } else {
        assertEquals(Duration.ZERO, d.delay());
      }
    });
  }

  /** What happens to one attempt of a simulated run: how long it took, and the server's hint. */
  record Attempt(long tookMs, Optional<Duration> hint) {}

  /**
   * Simulates a whole run on one clock: attempt durations and chosen delays add up. Every attempt
   * starts before the deadline, so the total planned wait (all delays plus the durations of every
   * attempt but the last) stays under it, and the run never exceeds maxAttempts (at most 50, so 50
   * attempt descriptions always suffice).
   */
  @Test
  void aWholeRunNeverPlansPastTheDeadline() {
    Gen<List<Attempt>> runs = lists().of(longsWithEdges(0, 20_000).zip(hints(30_000), Attempt::new)).ofSize(50);
    qt(3000).forAll(policies(), runs, longs().all()).checkAssert((policy, attemptsOfRun, seed) -> {
      Random random = new Random(seed);
      Duration elapsed = Duration.ZERO;
      Duration planned = Duration.ZERO;
      Duration previous = Duration.ZERO;
      int attempts = 0;
      while (true) {
        assertTrue(elapsed.compareTo(policy.deadline()) < 0, "attempt " + (attempts + 1) + " starts at " + elapsed);
        Attempt a = attemptsOfRun.get(attempts);
        attempts++;
        assertTrue(attempts <= policy.maxAttempts(), "attempt " + attempts + " of " + policy.maxAttempts());
        Duration took = Duration.ofMillis(a.tookMs());
        elapsed = elapsed.plus(took);
        RetryDecision d = policy.decide(attempts, elapsed, previous, a.hint(), random::nextDouble);
        if (!d.retry()) {
          break;
        }
        planned = planned.plus(took).plus(d.delay());
        assertTrue(planned.compareTo(policy.deadline()) < 0, "planned " + planned + " past " + policy.deadline());
        elapsed = elapsed.plus(d.delay());
        previous = d.delay();
      }
    });
  }
}
