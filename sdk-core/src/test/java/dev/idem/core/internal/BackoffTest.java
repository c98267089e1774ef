package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Jitter;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Table-driven checks of the backoff arithmetic, one table per jitter mode, with fixed random values. */
class BackoffTest {
  private static final long MS = 1_000_000L;
  private static final long BASE = 100 * MS;
  private static final long CAP = 10_000 * MS;
  private static final double MULT = 2.0;

  static Stream<Arguments> exponential() {
    return Stream.of(
        Arguments.of(0, 100 * MS), // "retry 0" is treated as the first
        Arguments.of(1, 100 * MS),
        Arguments.of(2, 200 * MS),
        Arguments.of(3, 400 * MS),
        Arguments.of(7, 6_400 * MS),
        Arguments.of(8, CAP), // 12.8 s, capped
        Arguments.of(64, CAP), // 2^63 × base overflows a long: must saturate, not wrap
        Arguments.of(1_100, CAP), // 2^1099 is Infinity in doubles
        Arguments.of(Integer.MAX_VALUE, CAP));
  }

  @ParameterizedTest(name = "retry {0} -> {1} ns")
  @MethodSource("exponential")
  void exponentialDelayDoublesAndSaturatesAtTheCap(int retry, long expected) {
    assertEquals(expected, Backoff.exponentialNanos(BASE, MULT, CAP, retry));
  }

  @Test
  void multiplierOneKeepsTheBaseForever() {
    assertEquals(BASE, Backoff.exponentialNanos(BASE, 1.0, CAP, Integer.MAX_VALUE));
  }

  @Test
  void hugeBaseAndCapNearLongMaxDoNotOverflow() {
    long cap = Long.MAX_VALUE;
    long d = Backoff.exponentialNanos(Long.MAX_VALUE / 2, 10.0, cap, 40);
    assertEquals(cap, d);
    for (Jitter j : Jitter.values()) {
      long x = Backoff.jitteredNanos(j, Long.MAX_VALUE / 2, 10.0, cap, 40, Long.MAX_VALUE, 0.999999);
      assertTrue(x >= 0 && x <= cap, j + " gave " + x);
    }
  }

  // jitter, retry, previous delay, r, expected
  static Stream<Arguments> jittered() {
    return Stream.of(
        // FULL: r × exp
        Arguments.of(Jitter.FULL, 1, 0L, 0.0, 0L),
        Arguments.of(Jitter.FULL, 1, 0L, 0.5, 50 * MS),
        Arguments.of(Jitter.FULL, 3, 0L, 0.5, 200 * MS),
        Arguments.of(Jitter.FULL, 3, 0L, 0.75, 300 * MS),
        Arguments.of(Jitter.FULL, 8, 0L, 0.5, 5_000 * MS),
        Arguments.of(Jitter.FULL, Integer.MAX_VALUE, 0L, 0.5, 5_000 * MS),
        Arguments.of(Jitter.FULL, Integer.MAX_VALUE, 0L, Math.nextDown(1.0), CAP - 1),
        // EQUAL: exp/2 + r × exp/2
        Arguments.of(Jitter.EQUAL, 1, 0L, 0.0, 50 * MS),
        Arguments.of(Jitter.EQUAL, 1, 0L, 0.5, 75 * MS),
        Arguments.of(Jitter.EQUAL, 3, 0L, 0.5, 300 * MS),
        Arguments.of(Jitter.EQUAL, 8, 0L, 0.0, 5_000 * MS),
        Arguments.of(Jitter.EQUAL, 8, 0L, 0.5, 7_500 * MS),
        Arguments.of(Jitter.EQUAL, Integer.MAX_VALUE, 0L, 0.5, 7_500 * MS),
        // NONE: exp, whatever r is
        Arguments.of(Jitter.NONE, 1, 0L, 0.3, 100 * MS),
        Arguments.of(Jitter.NONE, 2, 0L, 0.9, 200 * MS),
        Arguments.of(Jitter.NONE, 7, 0L, 0.0, 6_400 * MS),
        Arguments.of(Jitter.NONE, 8, 0L, 0.5, CAP),
        Arguments.of(Jitter.NONE, Integer.MAX_VALUE, 0L, 0.5, CAP),
        // DECORRELATED: base + r × (min(cap, 3 × max(previous, base)) − base)
        Arguments.of(Jitter.DECORRELATED, 1, 0L, 0.0, 100 * MS),
        Arguments.of(Jitter.DECORRELATED, 1, 0L, 0.5, 200 * MS),
        Arguments.of(Jitter.DECORRELATED, 2, 1_000 * MS, 0.5, 1_550 * MS),
        Arguments.of(Jitter.DECORRELATED, 5, 5_000 * MS, 0.5, 5_050 * MS), // upper capped at 10 s
        Arguments.of(Jitter.DECORRELATED, 9, CAP, 0.0, 100 * MS),
        Arguments.of(Jitter.DECORRELATED, 9, Long.MAX_VALUE, 0.5, 5_050 * MS), // 3 × prev must not overflow
        Arguments.of(Jitter.DECORRELATED, Integer.MAX_VALUE, Long.MAX_VALUE, Math.nextDown(1.0), CAP - 1));
  }

  @ParameterizedTest(name = "{0} retry {1} prev {2} r {3} -> {4}")
  @MethodSource("jittered")
  void jitteredDelayMatchesTheTable(Jitter jitter, int retry, long previous, double r, long expected) {
    long d = Backoff.jitteredNanos(jitter, BASE, MULT, CAP, retry, previous, r);
    // r × exp in doubles may land one nanosecond below the exact product; never above
    assertTrue(Math.abs(expected - d) <= 1, () -> "expected " + Duration.ofNanos(expected) + " got " + Duration.ofNanos(d));
    assertTrue(d >= 0 && d <= CAP);
  }

  @ParameterizedTest
  @EnumSource(Jitter.class)
  void randomValuesOutsideTheUnitIntervalAreRefused(Jitter jitter) {
    for (double r : new double[] {-0.1, 1.0, 1.5, Double.NaN}) {
      assertThrows(IllegalArgumentException.class, () -> Backoff.jitteredNanos(jitter, BASE, MULT, CAP, 1, 0, r));
    }
  }
}
