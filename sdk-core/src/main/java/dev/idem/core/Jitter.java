package dev.idem.core;

/**
 * How a backoff delay is randomized, so that clients that failed together do not retry together.
 * With {@code exp = min(maxDelay, baseDelay × multiplier^(n-1))} for the n-th retry and {@code r}
 * uniform in [0, 1):
 */
public enum Jitter {
  /** {@code r × exp}: the widest spread, and the default (AWS's "full jitter"). */
  FULL,
  /** {@code exp/2 + r × exp/2}: never shorter than half the exponential delay. */
  EQUAL,
  /**
   * {@code baseDelay + r × (min(maxDelay, 3 × previous) − baseDelay)}, where {@code previous} is the
   * delay before the previous retry ({@code baseDelay} before the first retry, and never less than
   * it), and at most {@code maxDelay}: AWS's "decorrelated jitter", with the cap applied to the
   * range's upper end rather than to the drawn delay, so that a capped delay stays spread over
   * [baseDelay, maxDelay) instead of piling up at {@code maxDelay}.
   */
  DECORRELATED,
  /** {@code exp}: no randomness; only for tests and for servers that want exact schedules. */
  NONE
}
