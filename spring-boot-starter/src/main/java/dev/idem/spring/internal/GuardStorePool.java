package dev.idem.spring.internal;

import dev.idem.server.IdempotencyGuard;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one pool on which every guard the starter makes runs its background store calls (lease
 * renewals, the purge), given to each through {@code IdempotencyGuard.Builder.storeExecutor}. With
 * a pool per guard (the guard's default) an app with five {@code @Idempotent} settings could hold
 * up to 20 store threads, and on PostgreSQL as many connections of its pool, and a hung store call
 * held the shutdown 5 s per guard. A guard never shuts down an executor it was given:
 * {@link GuardFactory} closes this one once, after its guards.
 *
 * <p>Up to 4 daemon threads named {@code idem-guard-store-N}, started when needed and ended after a
 * minute idle, as a guard's own pool. The queue is unbounded, bounded by what can be in it: each
 * live claim has at most one renewal queued or running, and the default guard's purge likewise. A
 * call the pool refuses (only after {@link #close()}) is surfaced by the guard as it surfaces any
 * refusal (a {@code PurgeFailed} event, a claim marked lost, both logged); the guard's calls catch
 * what they throw, and what would still escape one is logged on the guard's logger.
 *
 * <p>Thread-safe.
 */
public final class GuardStorePool {
  // The guard's logger, not this class's: operators set levels and filters on the guard's name.
  private static final Logger LOG = LoggerFactory.getLogger(IdempotencyGuard.class);
  /** As many as one guard's own pool has: a few hung calls leave the other claims renewed. */
  static final int THREADS = 4;
  /** The guard's own bound on close, once for every guard of the app instead of once per guard. */
  static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

  private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
  private final ThreadPoolExecutor pool;
  private final Duration closeWait;

  /** Makes the pool; it starts no thread until a call arrives. */
  public GuardStorePool() {
    this(CLOSE_WAIT);
  }

  /**
   * Makes the pool with another bound on {@link #close()}'s wait: a test that closes it on hung
   * calls gives zero, to see them interrupted without waiting the 5 s out in real time.
   *
   * @param closeWait how long {@link #close()} waits for running calls before it interrupts them;
   *     zero or positive
   * @throws IllegalArgumentException if negative
   */
  public GuardStorePool(Duration closeWait) {
    if (closeWait.isNegative()) {
      throw new IllegalArgumentException("closeWait must not be negative: " + closeWait);
    }
    this.closeWait = closeWait;
    AtomicInteger made = new AtomicInteger();
    this.pool = new ThreadPoolExecutor(THREADS, THREADS, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(), r -> {
      Thread t = new Thread(() -> {
        try {
          r.run();
        } finally {
          threads.remove(Thread.currentThread());
        }
      }, "idem-guard-store-" + made.incrementAndGet());
      t.setDaemon(true);
      threads.add(t);
      return t;
    }) {
      @Override
      protected void afterExecute(Runnable call, Throwable failure) {
        if (failure != null) {
          LOG.error("A guard's background store call failed", failure);
        }
      }
    };
    pool.allowCoreThreadTimeOut(true); // an idle app keeps no thread for it
  }

  /**
   * The pool itself, for the guards' {@code storeExecutor}: a guard reaches the queue of a
   * {@link ThreadPoolExecutor} it is given, and takes a completed claim's queued renewal off it,
   * where behind hung calls it would stay for good. Close through {@link #close()}, not on it.
   */
  ThreadPoolExecutor executor() {
    return pool;
  }

  /**
   * Shuts the pool down, after the guards that use it were closed (what is queued then returns at
   * once): waits up to 5 s in all for the calls still running, so that the store can be closed next,
   * then interrupts them with a warning. Called on one of the pool's own threads it cannot wait for
   * itself, nor should it interrupt its caller: it then shuts the pool down without a wait. Idempotent.
   */
  public void close() {
    pool.shutdown();
    if (threads.contains(Thread.currentThread())) {
      return;
    }
    try {
      if (!pool.awaitTermination(closeWait.toNanos(), TimeUnit.NANOSECONDS)) {
        int running = pool.getActiveCount();
        pool.shutdownNow();
        LOG.warn("Closing the idempotency guards: {} store call(s) (a lease renewal or the purge) still ran after {};"
            + " interrupted them", running, closeWait);
      }
    } catch (InterruptedException e) {
      pool.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
