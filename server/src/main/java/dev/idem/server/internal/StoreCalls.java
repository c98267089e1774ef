package dev.idem.server.internal;

import dev.idem.server.IdempotencyGuard;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a guard's background store calls (lease renewals, the purge) off its scheduler's thread: on
 * the executor the app gave, or on a small pool of the guard's own, which {@link #close()} shuts
 * down within a bounded wait so that the store can be closed next.
 *
 * <p>Thread-safe.
 */
public final class StoreCalls implements Executor {
  // The guard's logger, not this class's: operators set levels and filters on the guard's name.
  private static final Logger LOG = LoggerFactory.getLogger(IdempotencyGuard.class);
  // Threads for the background store calls (renewals, the purge). More than one, so that a call
  // that hangs holds back no other claim's renewal; few, since on PostgreSQL each running call
  // holds a connection of the app's pool, and one of SQLite's runs at a time on its connection.
  private static final int STORE_THREADS = 4;
  /** How long {@link #close()} waits for a background store call still running before interrupting it. */
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

  private final Executor calls;
  private final ThreadPoolExecutor owned;

  /**
   * @param given the app's executor, which the app keeps and shuts down; null for a pool of the
   *     guard's own
   */
  public StoreCalls(Executor given) {
    if (given != null) {
      this.calls = given;
      this.owned = null;
    } else {
      AtomicInteger threads = new AtomicInteger();
      // Unbounded queue, bounded by what can be in it: each claim has at most one renewal queued or
      // running (the next is scheduled when it ends), and the purge likewise.
      ThreadPoolExecutor pool = new ThreadPoolExecutor(STORE_THREADS, STORE_THREADS, 1, TimeUnit.MINUTES,
          new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "idem-guard-store-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
          });
      pool.allowCoreThreadTimeOut(true); // an idle guard keeps no thread for it
      this.calls = pool;
      this.owned = pool;
    }
  }

  /**
   * Hands a store call over.
   *
   * @param call the call; it checks first whether the guard closed meanwhile
   * @throws java.util.concurrent.RejectedExecutionException if the executor refuses it
   */
  @Override
  public void execute(Runnable call) {
    calls.execute(call);
  }

  /**
   * Shuts down the guard's own pool, waiting up to 5 s for a call still running, then interrupts
   * it with a warning. Leaves an executor of the app's alone. Idempotent.
   */
  public void close() {
    if (owned == null) {
      return;
    }
    owned.shutdown(); // what is queued returns at once: every call checks closed first
    try {
      if (!owned.awaitTermination(CLOSE_WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
        owned.shutdownNow();
        LOG.warn("Closing the idempotency guard: a store call (a lease renewal or the purge) still ran after {};"
            + " interrupted it", CLOSE_WAIT);
      }
    } catch (InterruptedException e) {
      owned.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
