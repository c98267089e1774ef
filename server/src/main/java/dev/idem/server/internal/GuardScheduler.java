package dev.idem.server.internal;

import dev.idem.core.spi.Scheduler;
import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Times a guard's lease renewals, its purge and a waiting repeat's polls: on the scheduler the app
 * gave, or on one daemon thread of the guard's own, which {@link #close()} stops. Its tasks only
 * hand work over, so one thread is enough.
 *
 * <p>Thread-safe.
 */
public final class GuardScheduler implements Scheduler {
  private final Scheduler scheduler;
  private final ScheduledThreadPoolExecutor owned;

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
        return t;
      });
      executor.setRemoveOnCancelPolicy(true);
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

  /** Stops the guard's own thread, dropping what it had scheduled; leaves the app's alone. Idempotent. */
  public void close() {
    if (owned != null) {
      owned.shutdownNow();
    }
  }
}
