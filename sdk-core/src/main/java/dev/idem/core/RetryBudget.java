package dev.idem.core;

import dev.idem.core.internal.TokenBucketRetryBudget;
import java.time.Clock;

/**
 * A budget shared by every operation to one host, so that retries cannot multiply load during an
 * outage. A first attempt never needs the budget; every retry does. When a retry is denied, the
 * operation stays PENDING (due again later) instead of being sent now.
 *
 * <p>Implementations must be thread-safe.
 */
public interface RetryBudget {
  /** Takes what one retry to {@code host} costs; false if the budget cannot afford it. */
  boolean tryAcquireRetry(String host);

  /** Tells the budget that an attempt to {@code host} succeeded. */
  void onSuccess(String host);

  /** No budget: every retry is allowed (the policy's own limits still apply). */
  static RetryBudget unlimited() {
    return new RetryBudget() {
      @Override
      public boolean tryAcquireRetry(String host) {
        return true;
      }

      @Override
      public void onSuccess(String host) {}
    };
  }

  /**
   * The default: a token bucket per host, as in the AWS SDKs. Each host starts with
   * {@code capacity} tokens; a retry costs {@code retryCost}; a success refunds
   * {@code successRefund}; and {@code refillPerSecond} tokens drip back with time, so that queued
   * operations are eventually retried even when no new request succeeds.
   *
   * <p>Chosen over a ratio budget (Finagle) because it needs no time window to reason about, it
   * makes total-outage behaviour exact (at most {@code capacity / retryCost} retries per host
   * before refills), and users of the AWS SDK already know it.
   *
   * @param capacity tokens per host when full (AWS: 500)
   * @param retryCost tokens per retry (AWS: 5)
   * @param successRefund tokens returned per success (AWS: 1)
   * @param refillPerSecond tokens returned per second of time, 0 for none
   * @param clock the time source for the refill
   */
  static RetryBudget tokenBucket(int capacity, int retryCost, int successRefund, double refillPerSecond,
      Clock clock) {
    return new TokenBucketRetryBudget(capacity, retryCost, successRefund, refillPerSecond, clock);
  }

  /** {@link #tokenBucket} with AWS's figures (500, 5, 1) and a refill of 1 token per second. */
  static RetryBudget tokenBucket(Clock clock) {
    return tokenBucket(500, 5, 1, 1.0, clock);
  }
}
