package dev.idem.core.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Runs a task after a delay, for the executor's timers: no thread is held while an operation
 * waits for its next attempt, and an attempt's timeout fires on time. Wrap a
 * {@link ScheduledExecutorService} with {@link #of}; tests supply a manual scheduler driven by a
 * fake clock.
 *
 * <p>The tasks an executor schedules are short and never call the journal: they hand work to the
 * executor's pool, or interrupt a sending thread. So one scheduler thread may serve several
 * executors, and a slow journal never delays a timer. Implementations must be thread-safe, and
 * should throw {@link java.util.concurrent.RejectedExecutionException} from {@link #schedule}
 * once they are shut down (the executor then leaves the operation PENDING with its key).
 */
@FunctionalInterface
public interface Scheduler {
  /**
   * Schedules {@code task} to run once after {@code delay}.
   *
   * @param task the work to run; it must not block for long
   * @param delay how long to wait before running it, zero for as soon as possible
   * @return a handle that cancels the task
   * @throws java.util.concurrent.RejectedExecutionException if the scheduler takes no more tasks
   */
  Future<?> schedule(Runnable task, Duration delay);

  /**
   * Adapts a {@link ScheduledExecutorService}; the caller keeps ownership and shuts it down.
   *
   * @param executor the executor that runs delayed tasks
   * @return a scheduler over {@code executor}, as thread-safe as the executor
   * @throws NullPointerException if {@code executor} is null
   */
  static Scheduler of(ScheduledExecutorService executor) {
    Objects.requireNonNull(executor, "executor");
    return (task, delay) -> executor.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
  }
}
