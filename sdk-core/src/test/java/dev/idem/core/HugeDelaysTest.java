package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.RetryDecision;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Durations a user can pass that do not fit in a long of nanoseconds.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class HugeDelaysTest {
  private static final Duration HUGE = Duration.ofSeconds(Long.MAX_VALUE);

  /** DelayFunction's Javadoc: "RetryPolicy still clamps the result to [0, maxDelay]". */
  @Test
  void aHugeCustomDelayIsClampedToMaxDelay() {
    DelayFunction huge = (retry, previous, random) -> HUGE;
    RetryPolicy p = RetryPolicy.builder().delayFunction(huge).maxDelay(Duration.ofSeconds(5)).build();

    RetryDecision d = p.decide(1, Duration.ZERO, Duration.ZERO, Optional.empty(), () -> 0.5);

    assertTrue(d.retry(), d.reason());
    assertEquals(Duration.ofSeconds(5), d.delay());
  }

  /** A maxDelay too long for the delay arithmetic is refused by the builder, naming the setting. */
  @Test
  void aHugeMaxDelayIsRefusedNamingTheSetting() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> RetryPolicy.builder().maxDelay(HUGE));
    assertTrue(e.getMessage().contains("maxDelay"), e.getMessage());
  }

  @Test
  void aHugeInFlightMinDelayIsRefusedNamingTheSetting() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> RetryPolicy.builder().inFlightMinDelay(HUGE));
    assertTrue(e.getMessage().contains("inFlightMinDelay"), e.getMessage());
  }

  /** The longest maxDelay allowed still decides, and a custom delay beyond it is clamped to it. */
  @Test
  void theLongestAllowedMaxDelayStillDecides() {
    Duration century = Duration.ofDays(36_525);
    RetryPolicy p = RetryPolicy.builder().maxDelay(century).inFlightMinDelay(century).deadline(century)
        .delayFunction((retry, previous, random) -> HUGE).build();

    RetryDecision d = p.decide(1, Duration.ZERO, Duration.ZERO, Optional.empty(), () -> 0.5);
    RetryDecision inFlight = p.decideInFlight(1, Duration.ZERO, Duration.ZERO, Optional.empty(), Optional.empty(),
        () -> 0.5);

    assertFalse(d.retry(), "a century's wait ends past a century's deadline: " + d.reason());
    assertFalse(inFlight.retry(), inFlight.reason());
  }

  /** A delay function that throws leaves the retry to the policy's own backoff, and says so. */
  @Test
  void aThrowingDelayFunctionFallsBackToTheBackoff() {
    DelayFunction parsesAnInteger = (retry, previous, random) -> Duration.ofSeconds(Long.parseLong("1.5"));
    RetryPolicy p = RetryPolicy.builder().delayFunction(parsesAnInteger).baseDelay(Duration.ofMillis(200))
        .jitter(Jitter.NONE).build();

    RetryDecision d = p.decide(1, Duration.ZERO, Duration.ZERO, Optional.empty(), () -> 0.5);

    assertTrue(d.retry(), d.reason());
    assertEquals(Duration.ofMillis(200), d.delay());
    assertTrue(d.reason().contains("NumberFormatException"), d.reason());
  }
}
