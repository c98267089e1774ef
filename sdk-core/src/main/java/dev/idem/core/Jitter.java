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
  /** {@code min(maxDelay, baseDelay + r × (3 × previous − baseDelay))}: AWS's "decorrelated jitter". */
  DECORRELATED,
  /** {@code exp}: no randomness; only for tests and for servers that want exact schedules. */
  NONE
}
