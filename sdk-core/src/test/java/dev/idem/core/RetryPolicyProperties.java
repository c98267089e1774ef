package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.Trials;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Randomized properties of {@link RetryPolicy#decide}. */
class RetryPolicyProperties {

  static RetryPolicy randomPolicy(Trials.Gen g) {
    long base = g.longWithEdges(1, 5_000);
    return RetryPolicy.builder()
        .maxAttempts(g.intWithEdges(1, 50))
        .deadline(Duration.ofMillis(g.longWithEdges(1, 600_000)))
        .baseDelay(Duration.ofMillis(base))
        .maxDelay(Duration.ofMillis(base * g.longWithEdges(1, 100)))
        .multiplier(g.doubleBetween(1.0, 10.0))
        .jitter(g.oneOf(Jitter.values()))
        .honorRetryAfter(g.chance(0.7))
        .build();
  }

  static Optional<Duration> randomHint(Trials.Gen g, long maxMs) {
    return g.chance(0.4) ? Optional.of(Duration.ofMillis(g.longWithEdges(0, maxMs))) : Optional.empty();
  }

  @Test
  void everyDelayLiesBetweenZeroAndTheCapAndEndsBeforeTheDeadline() {
    Trials.run(3000, g -> {
      RetryPolicy policy = randomPolicy(g);
      int attemptsMade = g.intWithEdges(1, 100_000, policy.maxAttempts() - 1, policy.maxAttempts());
      Duration elapsed = Duration.ofMillis(g.longWithEdges(0, 700_000, policy.deadline().toMillis()));
      Duration previous = Duration.ofMillis(g.longWithEdges(0, 1_000_000));
      Optional<Duration> hint = randomHint(g, 200_000);
      Random random = new Random(g.nextSeed());
      RetryDecision d = policy.decide(Math.max(1, attemptsMade), elapsed, previous, hint, random::nextDouble);
      assertFalse(d.delay().isNegative());
      assertTrue(d.delay().compareTo(policy.maxDelay()) <= 0, d + " exceeds " + policy.maxDelay());
      if (d.retry()) {
        assertTrue(attemptsMade < policy.maxAttempts());
        assertTrue(elapsed.plus(d.delay()).compareTo(policy.deadline()) < 0, d + " ends past " + policy.deadline());
        if (policy.honorRetryAfter() && hint.isPresent()) {
          Duration floor = hint.get().compareTo(policy.maxDelay()) > 0 ? policy.maxDelay() : hint.get();
          assertTrue(d.delay().compareTo(floor) >= 0, "Retry-After floor ignored: " + d);
        }
      } else {
        assertEquals(Duration.ZERO, d.delay());
      }
    });
  }

  /**
   * Simulates a whole run on one clock: attempt durations and chosen delays add up. Every attempt
   * starts before the deadline, so the total planned wait (all delays plus the durations of every
   * attempt but the last) stays under it, and the run never exceeds maxAttempts.
   */
  @Test
  void aWholeRunNeverPlansPastTheDeadline() {
    Trials.run(3000, g -> {
      RetryPolicy policy = randomPolicy(g);
      Random random = new Random(g.nextSeed());
      Duration elapsed = Duration.ZERO;
      Duration planned = Duration.ZERO;
      Duration previous = Duration.ZERO;
      int attempts = 0;
      while (true) {
        assertTrue(elapsed.compareTo(policy.deadline()) < 0, "attempt " + (attempts + 1) + " starts at " + elapsed);
        attempts++;
        assertTrue(attempts <= policy.maxAttempts(), "attempt " + attempts + " of " + policy.maxAttempts());
        Duration took = Duration.ofMillis(g.longWithEdges(0, 20_000));
        elapsed = elapsed.plus(took);
        RetryDecision d = policy.decide(attempts, elapsed, previous, randomHint(g, 30_000), random::nextDouble);
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
