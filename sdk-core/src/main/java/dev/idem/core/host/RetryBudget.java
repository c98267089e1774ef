package dev.idem.core.host;

import dev.idem.core.internal.TokenBucketRetryBudget;
import java.time.Clock;

/**
 * A budget shared by every operation to one host, so that retries cannot multiply load during an
 * outage. A first attempt never needs the budget; every retry does. When a retry is denied, the
 * operation stays PENDING (due again later) instead of being sent now.
 *
 * <p>Implementations must be thread-safe. An exception from {@link #onSuccess} or
 * {@link #onRetrySuccess} is logged (WARN) and ignored: the attempt's outcome stands. One from
 * {@link #tryAcquireRetry} sends nothing: the operation goes back to PENDING with its key and the
 * call throws {@code OperationPendingException} with it as the cause.
 */
public interface RetryBudget {
  /**
   * Takes what one retry to {@code host} costs; false if the budget cannot afford it.
   *
   * @param host the target host, as in the request URI
   * @return true if the retry was paid for and may be sent now; false if it must wait (nothing is
   *     taken then)
   */
  boolean tryAcquireRetry(String host);

  /**
   * Tells the budget that an attempt to {@code host} succeeded.
   *
   * @param host the target host, as in the request URI
   */
  void onSuccess(String host);

  /**
   * Tells the budget that a retry to {@code host}, which {@link #tryAcquireRetry} paid for,
   * succeeded. The token bucket gives the retry's cost back, as the AWS SDKs do: a host that
   * answers retries is healthy, and the budget exists to stop retry storms against a failing one.
   * Without it, resuming a few hundred operations that a crash left with an attempt in their
   * history (each resend is a retry) against a healthy host drained the budget and trickled the
   * rest out at the refill rate. The default calls {@link #onSuccess}.
   *
   * @param host the target host, as in the request URI
   */
  default void onRetrySuccess(String host) {
    onSuccess(host);
  }

  /**
   * No budget: every retry is allowed (the policy's own limits still apply).
   *
   * @return a stateless budget that never denies a retry
   */
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
   * {@code capacity} tokens; a retry costs {@code retryCost}; a successful first attempt refunds
   * {@code successRefund}, a successful retry its whole cost; and {@code refillPerSecond} tokens
   * drip back with time, so that queued operations are eventually retried even when no new request
   * succeeds.
   *
   * <p>Chosen over a ratio budget (Finagle) because it needs no time window to reason about, it
   * makes total-outage behaviour exact (at most {@code capacity / retryCost} retries per host
   * before refills), and users of the AWS SDK already know it.
   *
   * @param capacity tokens per host when full (AWS: 500)
   * @param retryCost tokens per retry (AWS: 5), at most {@code capacity}
   * @param successRefund tokens returned per successful first attempt (AWS: 1)
   * @param refillPerSecond tokens returned per second of time, 0 for none
   * @param clock the time source for the refill
   * @return a new, thread-safe budget; hosts are tracked separately
   * @throws IllegalArgumentException if capacity or retryCost is below 1, retryCost is above
   *     capacity (no retry could ever be afforded), or successRefund or refillPerSecond is negative
   */
  static RetryBudget tokenBucket(int capacity, int retryCost, int successRefund, double refillPerSecond,
      Clock clock) {
    return new TokenBucketRetryBudget(capacity, retryCost, successRefund, refillPerSecond, clock);
  }

  /**
   * {@link #tokenBucket} with AWS's figures (500, 5, 1) and a refill of 1 token per second.
   *
   * @param clock the time source for the refill
   * @return a new, thread-safe budget; the executor's default
   */
  static RetryBudget tokenBucket(Clock clock) {
    return tokenBucket(500, 5, 1, 1.0, clock);
  }
}
