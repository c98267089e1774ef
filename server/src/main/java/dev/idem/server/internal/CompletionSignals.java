package dev.idem.server.internal;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Wakes the requests of this process that wait for an operation, when this process finishes it:
 * a repeat waiting for the first request then reads the result at once instead of at its next
 * poll. A result written by another process is found by polling; a missed signal costs one poll.
 *
 * <p>Memory is bounded by the number of waiting requests: an entry is removed when it is
 * signalled or when a waiter leaves (its co-waiters then rely on their polls).
 * Thread-safe.
 *
 * @param <K> the operation identity
 */
public final class CompletionSignals<K> {
  private final Map<K, CompletableFuture<Void>> signals = new ConcurrentHashMap<>();

  /**
   * The signal a waiter for {@code key} waits on; shared by every waiter for it.
   *
   * @param key the operation
   * @return a future completed when the operation is finished here
   */
  public CompletableFuture<Void> watch(K key) {
    return signals.computeIfAbsent(key, k -> new CompletableFuture<>());
  }

  /**
   * Wakes every waiter for {@code key}.
   *
   * @param key the operation just finished (completed, released)
   */
  public void signal(K key) {
    CompletableFuture<Void> f = signals.remove(key);
    if (f != null) {
      f.complete(null);
    }
  }

  /**
   * A waiter leaves: drops its signal unless another waiter made a new one meanwhile.
   *
   * @param key the operation
   * @param signal what {@link #watch} returned
   */
  public void leave(K key, CompletableFuture<Void> signal) {
    signals.remove(key, signal);
  }

  /** Wakes every waiter, as the guard closes. */
  public void wakeAll() {
    for (K key : signals.keySet()) {
      signal(key);
    }
  }
}
