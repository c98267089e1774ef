package dev.idem.core.internal;

import dev.idem.core.Jitter;

/** Pure backoff arithmetic in nanoseconds, kept apart so it can be tested table by table. */
public final class Backoff {
  private Backoff() {}

  /**
   * The exponential delay before retry number {@code retry} (1 for the first retry), capped.
   * Computed in doubles so that large exponents saturate at the cap instead of overflowing.
   */
  public static long exponentialNanos(long baseNanos, double multiplier, long capNanos, int retry) {
    double exp = baseNanos * Math.pow(multiplier, Math.max(0, retry - 1));
    return exp >= capNanos || Double.isNaN(exp) ? capNanos : (long) exp;
  }

  /**
   * @return {@code r}
   * @throws IllegalArgumentException if {@code r} is not in [0, 1), as the executor's random source
   *     promises
   */
  public static double unit(double r) {
    if (!(r >= 0 && r < 1)) {
      throw new IllegalArgumentException("random value must lie in [0, 1): " + r);
    }
    return r;
  }

  /**
   * The jittered delay.
   *
   * @param r uniform in [0, 1)
   * @param previousNanos the previous delay, for DECORRELATED; 0 before the first retry
   * @return a delay in [0, capNanos]
   */
  public static long jitteredNanos(Jitter jitter, long baseNanos, double multiplier, long capNanos, int retry,
      long previousNanos, double r) {
    unit(r);
    long exp = exponentialNanos(baseNanos, multiplier, capNanos, retry);
    long d = switch (jitter) {
      case FULL -> (long) (r * exp);
      case EQUAL -> exp / 2 + (long) (r * (exp - exp / 2));
      case NONE -> exp;
      case DECORRELATED -> {
        long prev = Math.max(previousNanos, baseNanos);
        double upper = Math.min((double) capNanos, 3.0 * prev);
        yield (long) (baseNanos + r * Math.max(0, upper - baseNanos));
      }
    };
    return Math.max(0, Math.min(capNanos, d));
  }
}
