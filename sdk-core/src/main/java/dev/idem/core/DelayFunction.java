package dev.idem.core;

import java.time.Duration;

/**
 * A custom backoff, for teams whose schedule is not exponential-with-jitter (for example one
 * adapted from a resilience4j {@code IntervalFunction}). {@link RetryPolicy} still clamps the
 * result to [0, maxDelay], applies the Retry-After floor and stops at the deadline.
 */
@FunctionalInterface
public interface DelayFunction {
  /**
   * @param retry 1 for the first retry
   * @param previous the previous delay, {@link Duration#ZERO} before the first retry
   * @param random uniform in [0, 1), for jitter
   * @return the delay before this retry
   */
  Duration delay(int retry, Duration previous, double random);
}
