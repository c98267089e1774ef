package dev.idem.webhooks.internal;

import static dev.idem.webhooks.internal.BackgroundErrors.UNEXPECTED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.spi.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * RunWatchdog: a beat whose task had already started when {@code Run.end()} cancelled it (the last
 * run ending; {@code cancel(false)} does not stop a task already running, as in a
 * ScheduledThreadPoolExecutor) and that takes the lock only after a new run's {@code begin()}
 * scheduled a fresh beat, overwrites {@code beat} and schedules one more: two beat chains count
 * the beats twice as fast, and a healthy run is interrupted after about half the maximum run time,
 * counted as a failed attempt. Deterministic: a hand-driven scheduler; the started-then-cancelled
 * task is run after the cancel, as the executor would finish it.
 */
class ReviewWatchdogDoubleBeatTest {
  /** Tasks held until the test runs them; cancel marks them, as a FutureTask would. */
  static final class HandScheduler implements Scheduler {
    final List<Runnable> tasks = new ArrayList<>();
    final List<CompletableFuture<Void>> futures = new ArrayList<>();

    @Override
    public synchronized java.util.concurrent.Future<?> schedule(Runnable task, Duration delay) {
      CompletableFuture<Void> f = new CompletableFuture<>();
      tasks.add(task);
      futures.add(f);
      return f;
    }

    /** Runs, once, every task scheduled so far and not cancelled: one period of the beat. */
    void period() {
      List<Runnable> due = new ArrayList<>();
      synchronized (this) {
        for (int i = 0; i < tasks.size(); i++) {
          if (tasks.get(i) != null && !futures.get(i).isCancelled()) {
            due.add(tasks.get(i));
            tasks.set(i, null);
          }
        }
      }
      due.forEach(Runnable::run);
    }

    synchronized int pending() {
      int n = 0;
      for (int i = 0; i < tasks.size(); i++) {
        if (tasks.get(i) != null && !futures.get(i).isCancelled()) {
          n++;
        }
      }
      return n;
    }
  }

  @Test
  void aBeatStartedAsTheLastRunEndedDoesNotDoubleTheBeatRate() {
    HandScheduler s = new HandScheduler();
    RunWatchdog w = new RunWatchdog(s, Duration.ofMinutes(4), UNEXPECTED); // a beat a minute; interrupted after 5 beats
    RunWatchdog.Run first = w.begin(new Thread(() -> { }), () -> { });
    Runnable startedBeat = s.tasks.get(0); // the executor has just picked this beat up...
    first.end();                            // ...when the last run ends and cancels it (too late to stop it)
    RunWatchdog.Run second = w.begin(new Thread(() -> { }), () -> { }); // a new run schedules a fresh beat
    startedBeat.run();                      // the started beat now takes the lock and runs to its end

    int chains = s.pending();
    // The second run is healthy and well inside its limit of 4 minutes after 3 periods (3 minutes).
    s.period();
    s.period();
    s.period();
    assertFalse(second.exceeded(), "a run 3 minutes into a maximum run time of 4 minutes was interrupted and"
        + " counts as a failed attempt: " + chains + " beat chains pending after the race, each rescheduling"
        + " itself, timed it at that many times the rate");
    assertEquals(1, chains, "one beat chain while something runs");
    second.end();
    w.close();
  }
}
