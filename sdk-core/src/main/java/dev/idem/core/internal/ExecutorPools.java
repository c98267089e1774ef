package dev.idem.core.internal;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.spi.poll.PollLoop;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The threads of one executor: a scheduler for its timers and a pool for the journal work that
 * timers and HTTP client callbacks hand over. Each is either the app's (given to the builder, and
 * never shut down here) or owned by the executor: made on first use, so that an executor used only
 * synchronously starts no thread, and shut down when the executor closes.
 *
 * <p>Owned threads are daemon threads named {@code idem-scheduler-N-1} (one thread) and
 * {@code idem-async-N-M} (as many as processors, at least 2, idle ones stop after 30 s), N numbering
 * the executors of this process. The pool's queue holds {@value #QUEUE} tasks; beyond that it
 * refuses with {@link RejectedExecutionException}, and the caller decides what to do (a timer waits
 * a little and hands over again; an HTTP client's thread does the work itself), never the pool.
 *
 * <p>Thread-safe.
 */
public final class ExecutorPools {
  /** Bounds the owned pool's queue: beyond it, work waits where it came from instead of piling up. */
  static final int QUEUE = 1024;
  /** Names threads only; nothing else depends on it. */
  private static final AtomicInteger EXECUTORS = new AtomicInteger();

  private final int number = EXECUTORS.incrementAndGet();
  private final Scheduler appScheduler;
  private final Executor appPool;
  private final Scheduler scheduler;
  private final Executor pool;

  // Guarded by this.
  private ScheduledThreadPoolExecutor ownedScheduler;
  private ThreadPoolExecutor ownedPool;
  private boolean shutDown;

  /**
   * @param appScheduler the app's scheduler, or null for one owned here
   * @param appPool the app's executor, or null for a pool owned here
   */
  public ExecutorPools(Scheduler appScheduler, Executor appPool) {
    this.appScheduler = appScheduler;
    this.appPool = appPool;
    this.scheduler = appScheduler != null ? appScheduler
        : (task, delay) -> ownedScheduler().schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
    this.pool = appPool != null ? appPool : task -> ownedPool().execute(task);
  }

  /** The scheduler: the app's, or the owned one (which refuses once shut down). */
  public Scheduler scheduler() {
    return scheduler;
  }

  /** The pool for journal work: the app's, or the owned one (which refuses once shut down or full). */
  public Executor pool() {
    return pool;
  }

  /** Whether the pool will refuse every task from now on: an app's executor service shut down by the app. */
  boolean poolRefusesForGood() {
    return appPool instanceof ExecutorService es && es.isShutdown();
  }

  /**
   * Stops the owned scheduler and pool from taking new work. Unless {@code now}, work already
   * queued on the pool still runs, and so do delayed tasks still scheduled (the executor cancels its
   * own timers first; what is left are the attempt timeouts of synchronous calls still on the
   * wire); if {@code now}, it interrupts whatever the owned threads are still doing and drops what
   * they have not started.
   */
  synchronized void shutdown(boolean now) {
    shutDown = true;
    for (ExecutorService owned : owned()) {
      if (now) {
        owned.shutdownNow();
      } else {
        owned.shutdown();
      }
    }
  }

  /** Waits until the owned threads have ended, or until {@code deadline}; true if they have. */
  boolean awaitTermination(Instant deadline) throws InterruptedException {
    for (ExecutorService owned : owned()) {
      long nanos = Math.max(0, Duration.between(Instant.now(), deadline).toNanos());
      if (!owned.awaitTermination(nanos, TimeUnit.NANOSECONDS)) {
        return false;
      }
    }
    return true;
  }

  /** The owned scheduler and pool made so far. */
  private synchronized List<ExecutorService> owned() {
    return Stream.<ExecutorService>of(ownedScheduler, ownedPool).filter(Objects::nonNull).toList();
  }

  private synchronized ScheduledThreadPoolExecutor ownedScheduler() {
    if (shutDown) {
      throw new RejectedExecutionException("the IdempotentExecutor was closed; its scheduler takes no more timers");
    }
    if (ownedScheduler == null) {
      ownedScheduler = new ScheduledThreadPoolExecutor(1, PollLoop.daemonThreads("idem-scheduler-" + number));
      // A cancelled timer (an attempt that answered before its timeout) leaves the queue at once,
      // so that many short attempts under a long timeout do not pile up dead tasks.
      ownedScheduler.setRemoveOnCancelPolicy(true);
    }
    return ownedScheduler;
  }

  private synchronized ThreadPoolExecutor ownedPool() {
    if (shutDown) {
      throw new RejectedExecutionException("the IdempotentExecutor was closed; its pool takes no more work");
    }
    if (ownedPool == null) {
      int threads = Math.max(2, Runtime.getRuntime().availableProcessors());
      ownedPool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(QUEUE),
          PollLoop.daemonThreads("idem-async-" + number), new ThreadPoolExecutor.AbortPolicy());
      ownedPool.allowCoreThreadTimeOut(true);
    }
    return ownedPool;
  }
}
