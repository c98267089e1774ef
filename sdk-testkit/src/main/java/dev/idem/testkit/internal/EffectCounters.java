package dev.idem.testkit.internal;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Effect counters of one server: how often the business action ran, per key and in total. The
 * records themselves (claims, stored replies) live in the server module's guard.
 *
 * <p>Thread-safe.
 */
public final class EffectCounters {
  private final ConcurrentMap<String, AtomicLong> effectsByKey = new ConcurrentHashMap<>();
  private final AtomicLong totalEffects = new AtomicLong();
  // Guarded by itself. Effects count when they start, but a test that wants to retry and see a
  // replay must wait until the result is stored, so finished effects are counted apart.
  private final Map<String, Long> settledByKey = new HashMap<>();

  /**
   * Counts one execution of the business action.
   *
   * @param key the key it ran under, or null for a request without one
   * @return the server-wide number of this effect, starting at 1
   */
  public long countEffect(String key) {
    if (key != null) {
      effectsByKey.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
    }
    return totalEffects.incrementAndGet();
  }

  /**
   * Marks one effect under {@code key} as finished: its result stored, or discarded on failure.
   * Call after the guard completed or abandoned the claim, never before.
   */
  public void settle(String key) {
    synchronized (settledByKey) {
      settledByKey.merge(key, 1L, Long::sum);
      settledByKey.notifyAll();
    }
  }

  /**
   * Waits until at least {@code count} effects under {@code key} have {@linkplain #settle settled}.
   *
   * @return false if the timeout elapsed first
   * @throws InterruptedException if interrupted while waiting
   */
  public boolean awaitSettled(String key, long count, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (settledByKey) {
      while (settledByKey.getOrDefault(key, 0L) < count) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(settledByKey, left);
      }
      return true;
    }
  }

  /** Effects run under {@code key}, across callers and operations. */
  public long effectCount(String key) {
    AtomicLong n = effectsByKey.get(key);
    return n == null ? 0 : n.get();
  }

  /** Effects run in total, including those of requests without a key. */
  public long totalEffects() {
    return totalEffects.get();
  }
}
