package dev.idem.core.internal;

import static dev.idem.core.support.Props.doublesBetween;
import static dev.idem.core.support.Props.intsWithEdges;
import static dev.idem.core.support.Props.longsWithEdges;
import static dev.idem.core.support.Props.qt;
import static dev.idem.core.support.Props.unit;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Jitter;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/** Properties of the pure backoff arithmetic (QuickTheories, with shrinking). */
class BackoffProperties {
  /** One call of {@link Backoff#jitteredNanos}; {@code capExtra} is added to base so that cap >= base. */
  record Call(Jitter jitter, long base, long capExtra, double multiplier, int retry, long previous, double r) {
    long cap() {
      return base + Math.min(capExtra, Long.MAX_VALUE - base);
    }
  }

  static Gen<Call> calls() {
    Gen<Long> base = longsWithEdges(1, 60_000_000_000L, 1_000_000L);
    Gen<Long> capExtra = longsWithEdges(0, Long.MAX_VALUE);
    Gen<Integer> retry = intsWithEdges(0, Integer.MAX_VALUE, 1, 2, 63, 64, 1024, 1100);
    Gen<Long> previous = longsWithEdges(0, Long.MAX_VALUE, 1_000_000L);
    return Generate.enumValues(Jitter.class).zip(base, capExtra, doublesBetween(1.0, 1000.0),
        (j, b, c, m) -> new Call(j, b, c, m, 0, 0, 0))
        .zip(retry, previous, unit(), (c, n, p, r) -> new Call(c.jitter(), c.base(), c.capExtra(), c.multiplier(), n, p,
            r));
  }

  @Test
  void everyJitteredDelayLiesBetweenZeroAndTheCap() {
    qt(5000).forAll(calls()).checkAssert(c -> {
      long cap = c.cap();
      long d = Backoff.jitteredNanos(c.jitter(), c.base(), c.multiplier(), cap, c.retry(), c.previous(), c.r());
      assertTrue(d >= 0 && d <= cap, c.jitter() + " gave " + d + " for cap " + cap);
      long exp = Backoff.exponentialNanos(c.base(), c.multiplier(), cap, c.retry());
      assertTrue(exp >= c.base() && exp <= cap, "exponential " + exp + " outside [" + c.base() + ", " + cap + "]");
    });
  }

  @Test
  void exponentialDelayNeverShrinksWithTheRetryNumber() {
    qt(2000).forAll(longsWithEdges(1, 10_000_000_000L), doublesBetween(1.0, 10.0), intsWithEdges(1, 5000))
        .checkAssert((base, multiplier, retry) -> {
          long cap = 100 * base;
          assertTrue(Backoff.exponentialNanos(base, multiplier, cap, retry)
              <= Backoff.exponentialNanos(base, multiplier, cap, retry + 1));
        });
  }
}
