package dev.idem.webhooks.internal;

import dev.idem.core.spi.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiConsumer;

/**
 * The retries one processor scheduled, each also timed on its {@link Scheduler}: when a retry's
 * delay has passed by the scheduler, the event is listed here as elapsed, with the due time
 * recorded for it, and the processor is woken to claim it up to that due time
 * ({@link InboxStore#claimRetry}). Due times in the inbox stay wall-clock instants (they are shared
 * with other processors and kept across restarts), but whether this processor's own retry is due
 * no longer rests on its clock alone: a clock that does not move ({@code Clock.fixed}, often given
 * in an app's test configuration) never reaches a due time ahead of it, and a retry timed only by
 * it never ran. With a clock that moves, the regular poll usually claims the retry first, and the
 * timer then finds nothing to claim.
 *
 * <p>Bounded: at most {@link #MAX} retries are timed here at once; beyond that a retry is due by
 * the clock alone. {@link #close()} cancels the timers. Thread-safe.
 */
public final class RetryTimers {
  /** The most retries timed at once: one small scheduled task each. */
  public static final int MAX = 10_000;

  private final Scheduler scheduler;
  private final Runnable wake;
  private final BiConsumer<Error, String> onError;
  private final Object lock = new Object();
  /** Retries whose wait is still running, with its timer. */
  private final Map<EventKey, Timer> waiting = new HashMap<>();
  /** Retries whose wait is over, with the due time recorded for them, oldest first. */
  private final LinkedHashMap<EventKey, Long> elapsed = new LinkedHashMap<>();
  private boolean closed;

  /**
   * @param scheduler times the waits: the processor's
   * @param wake asks the processor for a poll, once a wait is over
   * @param onError given an Error a timer threw (and where): the processor stops for it, instead
   *     of the Error ending up unseen in a Future nobody reads
   */
  public RetryTimers(Scheduler scheduler, Runnable wake, BiConsumer<Error, String> onError) {
    this.scheduler = scheduler;
    this.wake = wake;
    this.onError = onError;
  }

  /**
   * Times a retry just scheduled in the inbox.
   *
   * @param key the event
   * @param dueAtMs the due time recorded in the inbox for it
   * @param delay the retry's delay, timed on the scheduler from now
   */
  public void schedule(EventKey key, long dueAtMs, Duration delay) {
    synchronized (lock) {
      elapsed.remove(key);
      Timer old = waiting.remove(key);
      if (old != null && old.future != null) {
        old.future.cancel(false);
      }
      if (closed || waiting.size() + elapsed.size() >= MAX) {
        return; // due by the clock alone
      }
      Timer t = new Timer(dueAtMs);
      // Listed first: a scheduler that runs a task at once, on this thread, finds it listed.
      waiting.put(key, t);
      try {
        t.future = scheduler.schedule(() -> elapse(key, t), delay);
      } catch (RejectedExecutionException closing) {
        // The processor is closing: its next processor claims the event by the clock.
        waiting.remove(key, t);
      }
    }
  }

  /** {@return up to {@code max} retries whose wait is over, with their due times, oldest first} */
  public List<Map.Entry<EventKey, Long>> elapsed(int max) {
    synchronized (lock) {
      List<Map.Entry<EventKey, Long>> out = new ArrayList<>(Math.min(max, elapsed.size()));
      for (Map.Entry<EventKey, Long> e : elapsed.entrySet()) {
        if (out.size() >= max) {
          break;
        }
        out.add(Map.entry(e.getKey(), e.getValue()));
      }
      return out;
    }
  }

  /**
   * The processor tried to claim an elapsed retry (it ran, or was not there to claim: finished,
   * running, or moved later): no longer listed, unless it was timed again meanwhile.
   */
  public void claimed(EventKey key, long dueAtMs) {
    synchronized (lock) {
      elapsed.remove(key, dueAtMs);
    }
  }

  /** Cancels the timers; none is timed from now on. Idempotent. */
  public void close() {
    synchronized (lock) {
      closed = true;
      for (Timer t : waiting.values()) {
        if (t.future != null) {
          t.future.cancel(false);
        }
      }
      waiting.clear();
      elapsed.clear();
    }
  }

  private void elapse(EventKey key, Timer t) {
    try {
      synchronized (lock) {
        if (closed || waiting.get(key) != t) {
          return;
        }
        waiting.remove(key);
        elapsed.put(key, t.dueAtMs);
      }
      wake.run();
    } catch (Error e) {
      onError.accept(e, "a retry's timer");
    }
  }

  /** One retry's wait. */
  private static final class Timer {
    final long dueAtMs;
    Future<?> future;  // under lock

    Timer(long dueAtMs) {
      this.dueAtMs = dueAtMs;
    }
  }
}
