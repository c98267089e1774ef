package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.RetryDecision;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {
  private static final RetryPolicy POLICY = RetryPolicy.builder()
      .maxAttempts(5)
      .deadline(Duration.ofSeconds(30))
      .baseDelay(Duration.ofMillis(100))
      .multiplier(2.0)
      .maxDelay(Duration.ofSeconds(5))
      .jitter(Jitter.NONE)
      .build();

  @Test
  void defaultsAreTheDocumentedOnes() {
    RetryPolicy p = RetryPolicy.ofDefaults();
    assertEquals(5, p.maxAttempts());
    assertEquals(Duration.ofSeconds(60), p.deadline());
    assertEquals(Duration.ofMillis(200), p.baseDelay());
    assertEquals(2.0, p.multiplier());
    assertEquals(Duration.ofSeconds(10), p.maxDelay());
    assertEquals(Jitter.FULL, p.jitter());
    assertTrue(p.honorRetryAfter());
  }

  @Test
  void builderRejectsNonsense() {
    assertThrows(IllegalArgumentException.class, () -> RetryPolicy.builder().maxAttempts(0));
    assertThrows(IllegalArgumentException.class, () -> RetryPolicy.builder().deadline(Duration.ZERO));
    assertThrows(IllegalArgumentException.class, () -> RetryPolicy.builder().baseDelay(Duration.ofMillis(-1)));
    assertThrows(IllegalArgumentException.class, () -> RetryPolicy.builder().multiplier(0.5));
    assertThrows(IllegalArgumentException.class, () -> RetryPolicy.builder().multiplier(Double.NaN));
    assertThrows(IllegalArgumentException.class, () -> RetryPolicy.builder().multiplier(Double.POSITIVE_INFINITY));
    assertThrows(IllegalArgumentException.class,
        () -> RetryPolicy.builder().baseDelay(Duration.ofSeconds(2)).maxDelay(Duration.ofSeconds(1)).build());
  }

  @Test
  void exponentialScheduleWithoutJitter() {
    Duration prev = Duration.ZERO;
    Duration[] expected = {Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(400), Duration.ofMillis(800)};
    for (int attempt = 1; attempt <= 4; attempt++) {
      RetryDecision d = POLICY.decide(attempt, Duration.ZERO, prev, Optional.empty(), () -> 0.5);
      assertTrue(d.retry());
      assertEquals(expected[attempt - 1], d.delay());
      assertTrue(d.reason().contains("backoff"), d.reason());
      prev = d.delay();
    }
  }

  @Test
  void stopsWhenAttemptsAreExhausted() {
    RetryDecision d = POLICY.decide(5, Duration.ZERO, Duration.ZERO, Optional.empty(), () -> 0.5);
    assertFalse(d.retry());
    assertEquals(Duration.ZERO, d.delay());
    assertTrue(d.reason().contains("attempts exhausted"), d.reason());
  }

  @Test
  void retryAfterSetsAFloor() {
    RetryDecision d = POLICY.decide(1, Duration.ZERO, Duration.ZERO, Optional.of(Duration.ofSeconds(3)), () -> 0.5);
    assertTrue(d.retry());
    assertEquals(Duration.ofSeconds(3), d.delay());
    assertTrue(d.reason().contains("Retry-After"), d.reason());
  }

  @Test
  void retryAfterBelowTheBackoffDoesNotShortenIt() {
    RetryDecision d = POLICY.decide(4, Duration.ZERO, Duration.ZERO, Optional.of(Duration.ofMillis(10)), () -> 0.5);
    assertEquals(Duration.ofMillis(800), d.delay());
  }

  @Test
  void retryAfterFloorIsCappedByMaxDelay() {
    RetryDecision d = POLICY.decide(1, Duration.ZERO, Duration.ZERO, Optional.of(Duration.ofSeconds(20)), () -> 0.5);
    assertTrue(d.retry());
    assertEquals(POLICY.maxDelay(), d.delay());
    assertTrue(d.reason().contains("capped"), d.reason());
  }

  @Test
  void retryAfterPastTheDeadlineStops() {
    RetryDecision d = POLICY.decide(1, Duration.ofSeconds(28), Duration.ZERO, Optional.of(Duration.ofSeconds(3)),
        () -> 0.5);
    assertFalse(d.retry());
    assertTrue(d.reason().contains("past the deadline"), d.reason());
    // exactly at the deadline is past it too: the next attempt could not start before the deadline
    assertFalse(POLICY.decide(1, Duration.ofSeconds(27), Duration.ZERO, Optional.of(Duration.ofSeconds(3)), () -> 0.5)
        .retry());
  }

  // Issue 15: the README said a hint beyond maxDelay is capped; the code stopped retrying whenever
  // the uncapped hint reached past the deadline. Capped it is, then checked against the deadline.
  @Test
  void retryAfterBeyondMaxDelayAndTheDeadlineIsCappedNotAStop() {
    Duration huge = dev.idem.core.internal.RetryAfter.parse("99999999999999999999", java.time.Instant.EPOCH)
        .orElseThrow();
    for (Duration hint : List.of(Duration.ofSeconds(60), Duration.ofHours(2), huge)) {
      RetryDecision d = POLICY.decide(1, Duration.ZERO, Duration.ZERO, Optional.of(hint), () -> 0.5);
      assertTrue(d.retry(), hint + ": " + d.reason());
      assertEquals(POLICY.maxDelay(), d.delay());
      assertTrue(d.reason().contains("capped"), d.reason());
    }
    // The capped wait still has to fit: with less than maxDelay left, the same hint stops.
    RetryDecision late = POLICY.decide(1, POLICY.deadline().minus(POLICY.maxDelay()), Duration.ZERO,
        Optional.of(Duration.ofHours(2)), () -> 0.5);
    assertFalse(late.retry());
    assertTrue(late.reason().contains("past the deadline"), late.reason());
  }

  @Test
  void garbageAndNegativeRetryAfterValuesAreIgnored() {
    for (String v : List.of("soon", "-5", "", "  ", "1.5", "0x10", "Tue, 99 Foo 2026", "5 s")) {
      assertTrue(dev.idem.core.internal.RetryAfter.parse(v, java.time.Instant.EPOCH).isEmpty(), v);
    }
  }

  @Test
  void retryAfterIsIgnoredWhenNotHonoured() {
    RetryPolicy p = POLICY.toBuilder().honorRetryAfter(false).build();
    RetryDecision d = p.decide(1, Duration.ofSeconds(28), Duration.ZERO, Optional.of(Duration.ofSeconds(300)), () -> 0.5);
    assertTrue(d.retry());
    assertEquals(Duration.ofMillis(100), d.delay());
  }

  @Test
  void backoffThatWouldEndPastTheDeadlineStops() {
    RetryDecision d = POLICY.decide(4, Duration.ofMillis(29_500), Duration.ZERO, Optional.empty(), () -> 0.5);
    assertFalse(d.retry());
    assertTrue(d.reason().contains("deadline"), d.reason());
    assertFalse(POLICY.decide(1, Duration.ofSeconds(31), Duration.ZERO, Optional.empty(), () -> 0.5).retry());
  }
}
