package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Jitter;
import dev.idem.core.support.Trials;
import org.junit.jupiter.api.Test;

/** Randomized properties of the pure backoff arithmetic. */
class BackoffProperties {

  @Test
  void everyJitteredDelayLiesBetweenZeroAndTheCap() {
    Trials.run(5000, g -> {
      Jitter jitter = g.oneOf(Jitter.values());
      long base = g.longWithEdges(1, 60_000_000_000L, 1_000_000L);
      long cap = base + g.longWithEdges(0, Long.MAX_VALUE - base);
      double multiplier = g.doubleBetween(1.0, 1000.0);
      int retry = g.intWithEdges(0, Integer.MAX_VALUE, 1, 2, 63, 64, 1024, 1100);
      long previous = g.longWithEdges(0, Long.MAX_VALUE, base, cap);
      double r = g.unit();
      long d = Backoff.jitteredNanos(jitter, base, multiplier, cap, retry, previous, r);
      assertTrue(d >= 0 && d <= cap, jitter + " gave " + d + " for cap " + cap);
      long exp = Backoff.exponentialNanos(base, multiplier, cap, retry);
      assertTrue(exp >= base && exp <= cap, "exponential " + exp + " outside [" + base + ", " + cap + "]");
    });
  }

  @Test
  void exponentialDelayNeverShrinksWithTheRetryNumber() {
    Trials.run(2000, g -> {
      long base = g.longBetween(1, 10_000_000_000L);
      double multiplier = g.doubleBetween(1.0, 10.0);
      int retry = g.intWithEdges(1, 5000);
      long cap = 100 * base;
      assertTrue(Backoff.exponentialNanos(base, multiplier, cap, retry)
          <= Backoff.exponentialNanos(base, multiplier, cap, retry + 1));
    });
  }
}
