package dev.idem.core.internal;

import dev.idem.core.host.RetryBudget;
import java.time.Clock;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * See {@link RetryBudget#tokenBucket}. Thread-safe: each host's bucket has its own lock.
 *
 * <p>Bounded: a full bucket is the same as the new one a host's next retry would get, so buckets
 * found full (after their refill) are dropped. This is done on the way of a call that brings a host
 * without a bucket, at most once a minute, or sooner once more than {@value #MAX_HOSTS} hosts hold
 * one; no thread of its own. The buckets kept are those of hosts that spent tokens and have not
 * yet earned them back: with a refill (the default, 1 a second), at most the hosts retried within
 * the last {@code capacity / refillPerSecond} seconds (500 s by default) beyond the
 * {@value #MAX_HOSTS}; with none, a host's depleted bucket stays until successes fill it. A depleted
 * bucket is never dropped, whatever the number of hosts: forgetting it would give a failing host a
 * fresh budget of retries. After a sweep that left more than three quarters of the cap, the next
 * size-driven one comes only once the map has grown by a quarter of the larger of the cap and what
 * was left, so that each sweep's scan is paid for by the new hosts since the last one (a constant
 * share each): the map may thus exceed {@value #MAX_HOSTS} by a quarter (12,500 buckets), or the
 * depleted buckets by a quarter of their number.
 */
public final class TokenBucketRetryBudget implements RetryBudget {
  /** Hosts with a bucket beyond which the full ones are dropped at once instead of once a minute. */
  static final int MAX_HOSTS = 10_000;
  private static final long SWEEP_EVERY_MILLIS = 60_000;
  private final int capacity;
  private final int retryCost;
  private final int successRefund;
  private final double refillPerNano;
  private final Clock clock;
  private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
  private final int maxHosts;
  private final AtomicBoolean sweeping = new AtomicBoolean();
  /** When a call that brings a new host next looks for full buckets, in the clock's millis. */
  private volatile long nextSweepAt;
  /** Past this many buckets, that call looks at once (raised when too few were full to drop). */
  private volatile int sweepAbove;

  public TokenBucketRetryBudget(int capacity, int retryCost, int successRefund, double refillPerSecond, Clock clock) {
    this(capacity, retryCost, successRefund, refillPerSecond, clock, MAX_HOSTS);
  }

  /** As the public constructor, with the number of hosts past which full buckets are dropped at once. */
  TokenBucketRetryBudget(int capacity, int retryCost, int successRefund, double refillPerSecond, Clock clock,
      int maxHosts) {
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
    this.maxHosts = Checks.atLeastOne(maxHosts, "maxHosts");
    this.sweepAbove = maxHosts;
    this.nextSweepAt = clock.millis() + SWEEP_EVERY_MILLIS;
  }

  @Override
  public boolean tryAcquireRetry(String host) {
    while (true) {
      Bucket b = bucket(host);
      synchronized (b) {
        if (b.dropped) {
          continue;   // dropped as full after this caller found it: the map has its successor
        }
        refill(b);
        if (b.tokens < retryCost) {
          return false;
        }
        b.tokens -= retryCost;
        return true;
      }
    }
  }

  @Override
  public void onSuccess(String host) {
    while (!refundTo(bucket(host), successRefund)) {
      // dropped meanwhile: the next look-up makes a new bucket
    }
  }

  @Override
  public void onRetrySuccess(String host) {
    while (!refundTo(bucket(host), retryCost)) {
      // dropped meanwhile: the next look-up makes a new bucket
    }
  }

  /** Gives {@code refund} tokens back to {@code b}; false if it was dropped meanwhile (nothing given). */
  private boolean refundTo(Bucket b, int refund) {
    if (b.tokens >= capacity) {
      // A healthy host's bucket is full, and a refund to a full bucket changes nothing (a later
      // refill starts from full whenever it was last stamped). Skipping the lock here keeps
      // concurrent callers to one host from queueing on it after every success. A dropped bucket
      // was full too: the refund it misses is one a full bucket would not have taken.
      return true;
    }
    synchronized (b) {
      if (b.dropped) {
        return false;
      }
      refill(b);
      b.tokens = Math.min(capacity, b.tokens + refund);
      return true;
    }
  }

  /** Tokens left for {@code host}, after refill; for tests and metrics. */
  public double tokens(String host) {
    while (true) {
      Bucket b = bucket(host);
      synchronized (b) {
        if (b.dropped) {
          continue;
        }
        refill(b);
        return b.tokens;
      }
    }
  }

  /** Hosts holding a bucket now; for tests. */
  int hostsHeld() {
    return buckets.size();
  }

  private Bucket bucket(String host) {
    // A plain read first: computeIfAbsent would make its capturing lambda on every call.
    Bucket b = buckets.get(host);
    if (b != null) {
      return b;
    }
    // Only a host without a bucket can grow the map: the look for full ones to drop is made here.
    sweepIfDue();
    return buckets.computeIfAbsent(host, h -> new Bucket(capacity, clock.instant()));
  }

  private void sweepIfDue() {
    if (clock.millis() - nextSweepAt < 0 && buckets.size() <= sweepAbove) {
      return;
    }
    if (!sweeping.compareAndSet(false, true)) {
      return;   // another caller is dropping them
    }
    try {
      buckets.forEach((host, b) -> {
        synchronized (b) {
          refill(b);
          if (b.tokens >= capacity) {
            // Under the bucket's lock: a caller that finds the bucket dropped goes to the map
            // again, and gets (or makes) the full bucket that replaces it, so nothing it takes or
            // gives back is lost.
            b.dropped = true;
            buckets.remove(host, b);
          }
        }
      });
      // Always head-room: a sweep that found only one or two buckets full would otherwise leave
      // the map at the cap, and the next new host would scan it all again. See CapSweep for the
      // bound on the map and on the scans per new host.
      sweepAbove = CapSweep.nextThreshold(buckets.size(), maxHosts);
      nextSweepAt = clock.millis() + SWEEP_EVERY_MILLIS;
    } finally {
      sweeping.set(false);
    }
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
    /** Set, under the lock, when the bucket leaves the map: its callers go to the map again. */
    boolean dropped;

    Bucket(double tokens, Instant at) {
      this.tokens = tokens;
      this.refilledAt = at;
    }
  }
}
