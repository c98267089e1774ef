package dev.idem.core.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Runs a task after a delay, for the asynchronous executor: no thread is held while an operation
 * waits for its next attempt. Wrap a {@link ScheduledExecutorService} with {@link #of}; tests
 * supply a manual scheduler driven by a fake clock.
 */
@FunctionalInterface
public interface Scheduler {
  /**
   * Schedules {@code task} to run once after {@code delay}.
   *
   * @param task the work to run; it must not block for long
   * @param delay how long to wait before running it, zero for as soon as possible
   * @return a handle that cancels the task
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
