package dev.idem.server.internal;

import dev.idem.core.spi.Scheduler;
import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Times a guard's lease renewals, its purge and a waiting repeat's polls: on the scheduler the app
 * gave, or on one daemon thread of the guard's own, which {@link #close()} stops, also when it is
 * called on that thread (a {@code GuardListener} that closes the guard on a purge the app's store
 * executor refused). Its tasks only hand work over, so one thread is enough.
 *
 * <p>Thread-safe.
 */
public final class GuardScheduler implements Scheduler {
  private final Scheduler scheduler;
  private final ScheduledThreadPoolExecutor owned;
  private volatile Thread ownThread; // the owned executor's one thread, once it has started

  /**
   * @param given the app's scheduler, which the app keeps; null for a thread of the guard's own
   * @param renewEvery how often a claim's lease is renewed
   */
  public GuardScheduler(Scheduler given, Duration renewEvery) {
    if (given != null) {
      this.scheduler = given;
      this.owned = null;
    } else {
      ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "idem-guard-leases");
        t.setDaemon(true);
        ownThread = t;
        return t;
      });
      executor.setRemoveOnCancelPolicy(true);
      // So that shutdown() drops what is timed, as shutdownNow() does, for close() on this very thread.
      executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
      // Every claim schedules its renewal (renewEvery ahead) and cancels it when it ends. On a queue
      // that the previous cancel had emptied, each new renewal became the queue's head, and a new
      // head wakes the executor's thread to re-arm its timer: one wake-up, a context switch on a
      // loaded machine, per request. A no-op at half that period keeps an earlier head in the
      // queue, so a renewal never is one (the thread wakes twice per renewEvery instead).
      long keepHeadNanos = Math.max(1, renewEvery.toNanos() / 2);
      executor.scheduleAtFixedRate(() -> { }, keepHeadNanos, keepHeadNanos, TimeUnit.NANOSECONDS);
      this.owned = executor;
      this.scheduler = Scheduler.of(executor);
    }
  }

  /**
   * {@inheritDoc}
   *
   * @throws java.util.concurrent.RejectedExecutionException once the guard's own thread is stopped
   */
  @Override
  public Future<?> schedule(Runnable task, Duration delay) {
    return scheduler.schedule(task, delay);
  }

  /**
   * Stops the guard's own thread, dropping what it had scheduled; leaves the app's alone. Called on
   * that thread, it does not interrupt it: shutdownNow() interrupts every thread of the executor, and
   * the caller would carry the interrupt into its next blocking step (the store's close, say). Its
   * thread then ends when the task that called this returns. Idempotent.
   */
  public void close() {
    if (owned == null) {
      return;
    }
    if (Thread.currentThread() == ownThread) {
      owned.shutdown();
    } else {
      owned.shutdownNow();
    }
  }
}
