package dev.idem.server.internal;

import dev.idem.core.spi.Scheduler;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The pauses of a repeat that waits for the first request with its key: between two reads of the
 * store it sleeps until the next poll, timed on the guard's scheduler, or until this process
 * finishes the operation and {@linkplain CompletionSignals signals} it, whichever is first.
 *
 * <p>Thread-safe.
 */
public final class RepeatPolls {
  // A repeat waiting for the first request polls the store at these intervals, doubling, unless
  // this process finishes the operation first and wakes it.
  public static final Duration FIRST_POLL = Duration.ofMillis(25);
  private static final Duration LAST_POLL = Duration.ofSeconds(1);
  // A scheduler that never runs the poll must not hold a request forever.
  private static final long POLL_SAFETY_MILLIS = 5_000;

  private final Scheduler scheduler;

  /** @param scheduler times the polls */
  public RepeatPolls(Scheduler scheduler) {
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
  }

  /**
   * @param pause the pause just taken
   * @return the next one: twice as long, up to 1 s
   */
  public static Duration after(Duration pause) {
    return pause.multipliedBy(2).compareTo(LAST_POLL) > 0 ? LAST_POLL : pause.multipliedBy(2);
  }

  /**
   * Waits until {@code signal} fires or {@code d} passes on the scheduler, whichever is first.
   *
   * @param signal fires when this process finishes the operation
   * @param d the longest wait
   * @return false if interrupted (the interrupt is kept) or the scheduler refused the poll: stop waiting
   */
  public boolean pause(CompletableFuture<Void> signal, Duration d) {
    CompletableFuture<Void> tick = new CompletableFuture<>();
    Future<?> task;
    try {
      task = scheduler.schedule(() -> tick.complete(null), d);
    } catch (RejectedExecutionException e) {
      return false; // the guard is closing: stop waiting
    }
    try {
      CompletableFuture.anyOf(signal, tick).get(d.toMillis() + POLL_SAFETY_MILLIS, TimeUnit.MILLISECONDS);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException | TimeoutException e) {
      return true; // poll anyway
    } finally {
      task.cancel(false);
    }
  }
}
