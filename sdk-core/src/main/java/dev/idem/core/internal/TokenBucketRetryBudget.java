package dev.idem.core.internal;

import dev.idem.core.host.RetryBudget;
import java.time.Clock;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/** See {@link RetryBudget#tokenBucket}. Thread-safe: each host's bucket has its own lock. */
public final class TokenBucketRetryBudget implements RetryBudget {
  private final int capacity;
  private final int retryCost;
  private final int successRefund;
  private final double refillPerNano;
  private final Clock clock;
  private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

  public TokenBucketRetryBudget(int capacity, int retryCost, int successRefund, double refillPerSecond, Clock clock) {
    if (capacity < 1 || retryCost < 1 || successRefund < 0 || !(refillPerSecond >= 0)) {
      throw new IllegalArgumentException("need capacity >= 1, retryCost >= 1, successRefund >= 0, refillPerSecond >= 0");
    }
    if (retryCost > capacity) {
      // A bucket never holds more than its capacity: no retry could ever be paid for.
      throw new IllegalArgumentException("retryCost (" + retryCost + ") must be at most capacity (" + capacity
          + "), or no retry is ever allowed");
    }
    this.capacity = capacity;
    this.retryCost = retryCost;
    this.successRefund = successRefund;
    this.refillPerNano = refillPerSecond / 1e9;
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  @Override
  public boolean tryAcquireRetry(String host) {
    Bucket b = bucket(host);
    synchronized (b) {
      refill(b);
      if (b.tokens < retryCost) {
        return false;
      }
      b.tokens -= retryCost;
      return true;
    }
  }

  @Override
  public void onSuccess(String host) {
    Bucket b = bucket(host);
    if (b.tokens >= capacity) {
      // A healthy host's bucket is full, and a refund to a full bucket changes nothing (a later
      // refill starts from full whenever it was last stamped). Skipping the lock here keeps
      // concurrent callers to one host from queueing on it after every success.
      return;
    }
    synchronized (b) {
      refill(b);
      b.tokens = Math.min(capacity, b.tokens + successRefund);
    }
  }

  @Override
  public void onRetrySuccess(String host) {
    Bucket b = bucket(host);
    synchronized (b) {
      refill(b);
      b.tokens = Math.min(capacity, b.tokens + retryCost);
    }
  }

  /** Tokens left for {@code host}, after refill; for tests and metrics. */
  public double tokens(String host) {
    Bucket b = bucket(host);
    synchronized (b) {
      refill(b);
      return b.tokens;
    }
  }

  private Bucket bucket(String host) {
    // A plain read first: computeIfAbsent would make its capturing lambda on every call.
    Bucket b = buckets.get(host);
    return b != null ? b : buckets.computeIfAbsent(host, h -> new Bucket(capacity, clock.instant()));
  }

  private void refill(Bucket b) {
    Instant now = clock.instant();
    if (refillPerNano > 0 && now.isAfter(b.refilledAt)) {
      double nanos = (double) java.time.Duration.between(b.refilledAt, now).toNanos();
      b.tokens = Math.min(capacity, b.tokens + nanos * refillPerNano);
    }
    b.refilledAt = now.isAfter(b.refilledAt) ? now : b.refilledAt;
  }

  private static final class Bucket {
    /** Written under the bucket's lock; volatile for {@link #onSuccess}'s look without it. */
    volatile double tokens;
    Instant refilledAt;

    Bucket(double tokens, Instant at) {
      this.tokens = tokens;
      this.refilledAt = at;
    }
  }
}
