package dev.idem.testkit.internal;

import dev.idem.core.Fingerprint;
import dev.idem.testkit.Reply;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Idempotency records and effect counters of one server.
 *
 * <p>Thread-safe. MockWebServer dispatches every connection on its own thread, so the
 * check-then-insert of a claim is a single {@link ConcurrentMap#putIfAbsent}: two duplicates that
 * arrive together can never both see "absent" and both run the effect.
 */
public final class RecordStore {
  private final ConcurrentMap<OperationIdentity, IdempotencyRecord> records = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, AtomicLong> effectsByKey = new ConcurrentHashMap<>();
  private final AtomicLong totalEffects = new AtomicLong();
  private final AtomicLong claimIds = new AtomicLong();
  // Guarded by itself. Effects count when they start, but a test that wants to retry and see a
  // replay must wait until the result is stored, so finished effects are counted apart.
  private final Map<String, Long> settledByKey = new HashMap<>();

  /**
   * Atomically claims an operation, or reports why it cannot be claimed.
   *
   * <p>A fingerprint mismatch wins over "in flight": a different payload under a used key is a
   * client bug that waiting will never fix, so telling the client to retry later would be wrong.
   */
  public ClaimResult claim(OperationIdentity id, Fingerprint fingerprint) {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(fingerprint, "fingerprint");
    IdempotencyRecord.Processing mine =
        new IdempotencyRecord.Processing(fingerprint, claimIds.incrementAndGet());
    IdempotencyRecord existing = records.putIfAbsent(id, mine);
    if (existing == null) {
      return new ClaimResult.Claimed(mine);
    }
    if (!existing.fingerprint().equals(fingerprint)) {
      return new ClaimResult.Mismatch();
    }
    if (existing instanceof IdempotencyRecord.Completed completed) {
      return new ClaimResult.Replay(completed.reply());
    }
    return new ClaimResult.InFlight();
  }

  /**
   * Stores the reply of a claimed operation.
   *
   * @throws IllegalStateException if {@code claim} is no longer the record of {@code id}
   */
  public void complete(OperationIdentity id, IdempotencyRecord.Processing claim, Reply reply) {
    Objects.requireNonNull(reply, "reply");
    if (!records.replace(id, claim, new IdempotencyRecord.Completed(claim.fingerprint(), reply))) {
      throw new IllegalStateException("claim on " + id + " was lost before completion");
    }
  }

  /** Forgets a claimed operation that did not finish, so that a retry may run it again. */
  public void release(OperationIdentity id, IdempotencyRecord.Processing claim) {
    records.remove(id, claim);
  }

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
   * Call after {@link #complete} or {@link #release}, never before.
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
