package dev.idem.webhooks.internal;

import dev.idem.core.spi.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * The maximum run time of a processor's handler attempts. Timed on the processor's
 * {@link Scheduler}, not read from its clock: a fake scheduler drives it in tests, and a clock that
 * does not move ({@code Clock.fixed}) cannot leave a hung handler unbounded. One beat every quarter
 * of the limit while something runs (as the {@link LeaseHeartbeat} does), not a timer per run: a
 * timer per run, cancelled when the run ends, would stay in a {@code ScheduledThreadPoolExecutor}'s
 * queue until its time, a quarter of an hour of them at the processor's rate. A run is interrupted
 * at the fifth beat after it began: more than the limit after it began, at most a quarter more.
 * {@link Run#end()} and the beat exclude each other, so no interrupt reaches the thread after its
 * run ended. Thread-safe.
 */
public final class RunWatchdog {
  /** Beats per limit: a run is interrupted after more than this many. */
  static final int BEATS = 4;

  private final Object lock = new Object();
  private final BeatChain beat;  // under lock; beating while something runs
  private final Set<Run> running = new HashSet<>();  // under lock
  private long beats;  // under lock
  private boolean closed;  // under lock

  /**
   * @param scheduler times the beats; one that refuses them (closing) leaves the runs unbounded,
   *     as close() interrupts them itself
   * @param limit the longest a run may take
   * @param onError given an Error a beat threw (and where): the processor stops for it
   */
  public RunWatchdog(Scheduler scheduler, Duration limit, BiConsumer<Error, String> onError) {
    // At least a millisecond: a limit of a few milliseconds must not turn the beat into a spin.
    Duration d = limit.dividedBy(BEATS);
    this.beat = new BeatChain(scheduler, d.isZero() ? Duration.ofMillis(1) : d, this::beat, onError,
        "the maximum run time's watchdog");
  }

  /**
   * A handler begins to run on {@code thread}.
   *
   * @param onExceeded runs once the limit passed, after the interrupt, on the scheduler's thread;
   *     it must not block
   * @return the run, to {@link Run#end()} when the handler returned or threw
   * @throws Error or RuntimeException if the scheduler failed to take the first beat: the run is not
   *     timed, so no later beat interrupts the thread (by then running something else)
   */
  public Run begin(Thread thread, Runnable onExceeded) {
    Run r = new Run(thread, onExceeded);
    synchronized (lock) {
      r.startBeat = beats;
      running.add(r);
      if (!closed) {
        try {
          beat.startLocked();
        } catch (RuntimeException | Error failed) {
          running.remove(r);
          throw failed;
        }
      }
    }
    return r;
  }

  /** No beat from now on: the runs still going on are unbounded (close() interrupts them). Idempotent. */
  public void close() {
    synchronized (lock) {
      closed = true;
      beat.stopLocked();
    }
  }

  private void beat(long ticket) {
    List<Run> cut = List.of();
    try {
      synchronized (lock) {
        // Stale: it started before the last run's end() or close() cancelled it. Counting it, a chain
        // begun since would beat beside it, timing the runs at twice the rate.
        if (!beat.claimLocked(ticket)) {
          return;
        }
        // Once claimed, the chain is this beat's to carry on whatever fails (an OutOfMemoryError),
        // and a run is listed in cut (sized first, so adding cannot fail) as it is interrupted.
        try {
          beats++;
          cut = new ArrayList<>(running.size());
          for (Iterator<Run> it = running.iterator(); it.hasNext(); ) {
            Run r = it.next();
            if (beats - r.startBeat > BEATS) {
              it.remove();
              r.exceeded = true;
              r.thread.interrupt();
              cut.add(r);
            }
          }
        } finally {
          if (!running.isEmpty()) {
            beat.rescheduleLocked(ticket);
          }
        }
      }
    } finally {
      // Even past a failure above: a run taken out and interrupted here is timed by nothing else,
      // and its lease must be let go; one not cut is still timed, its lease kept.
      for (Run r : cut) {
        r.onExceeded.run();
      }
    }
  }

  /** One handler attempt being timed. */
  public final class Run {
    private final Thread thread;
    private final Runnable onExceeded;
    private long startBeat;  // under lock
    private boolean exceeded;  // under lock

    private Run(Thread thread, Runnable onExceeded) {
      this.thread = thread;
      this.onExceeded = onExceeded;
    }

    /** The run ended: no interrupt from now on. Idempotent. */
    public void end() {
      synchronized (lock) {
        running.remove(this);
        if (running.isEmpty()) {
          beat.stopLocked();
        }
      }
    }

    /** {@return whether the limit passed before the run ended (its thread was interrupted)} */
    public boolean exceeded() {
      synchronized (lock) {
        return exceeded;
      }
    }
  }
}
