package dev.idem.webhooks.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The threads running one of a processor's events now (its pool's workers, and the app's threads
 * inside its {@code processDue}), and which of those runs close() cut short.
 *
 * <p>close() may be called by a handler (a kill switch, a handler that finds the app misconfigured):
 * waiting for the pool to terminate would then wait for the caller's own run, which cannot end while
 * it waits, so close() asks here whether its caller is one of these threads, and if so waits for the
 * others only.
 *
 * <p>After its grace, close() interrupts the handlers still running ({@link #cutShort()}), and a
 * failure of theirs is then the shutdown's, not the event's. That is known per run, not for the
 * processor as a whole: a handler that called close() itself, or whose handler had already returned
 * or thrown when close() interrupted the others, was not interrupted by it, and is judged by its own
 * outcome. The mark and the interrupt are made under the same lock as {@link #handlerEnded()}, so a
 * run counts as cut short exactly when close() interrupted it while its handler was running (and
 * the watchdog had not interrupted it first, below).
 *
 * <p>Each run also carries its {@linkplain RunWatchdog maximum run time} ({@link #timedBy}), so that
 * the two interrupts are ordered: a run the watchdog already interrupted does not count as cut short
 * (it overran, and is judged so), and a run close() cut short is judged cut whatever the watchdog
 * does after; and a handler's own close() stops timing its run ({@link #stopTimingCaller()}), whose
 * interrupt would otherwise land in close()'s wait.
 *
 * <p>A run counts from the moment a poll hands it to the pool ({@link #queued()}), not only from
 * when a worker begins it: the pool's shutdown lets a run already handed to it go on, so a handler's
 * close() that waited only for the runs begun returned while a worker was about to begin one (the
 * worker not yet started, or still finishing its run before), which then ran with no lease renewal
 * and no watchdog, or, queued past the cut, handed its event back after close() had returned.
 *
 * <p>A {@code processDue} call lists its thread too ({@link #enterDue()}), from just before each
 * claim: close() then waits for it, renews its lease and cuts it short after the grace as it does
 * a worker's run, and a claim it makes while close() is being called is handed back before close()
 * returns. A thread may run one event inside another (a handler, or a listener, that calls
 * {@code processDue}): its runs are stacked, the innermost on top, and the thread is listed until
 * the outermost ends, so that close() from either never waits for its own thread.
 *
 * <p>Bounded: a thread is listed only during its runs, at most one per worker plus one per nested
 * {@code processDue} call of the app's, and the runs handed to the pool are at most one per worker
 * (the processor's slots). Thread-safe.
 */
public final class WorkerRuns {
  private final Object lock = new Object();
  private final Map<Thread, Run> running = new HashMap<>();  // guarded by lock
  private int queued;  // guarded by lock: runs handed to the pool, neither begun nor handed back yet
  private boolean cut;  // guarded by lock: close() has cut the runs short; no run begins any more

  /**
   * A poll hands a run to the pool: until {@link #enter()} begins it, or {@link #notRun()} after
   * it was refused, it counts as one of the runs a handler's close() waits for. Call it before
   * handing the run over, so that no close() can look between the two.
   */
  public void queued() {
    synchronized (lock) {
      queued++;
    }
  }

  /**
   * A run {@link #queued()} will not begin, and its event has been handed back (or could not be):
   * the pool refused it or could not start a worker for it, or {@link #enter()} refused it. It
   * counts no more.
   */
  public void notRun() {
    synchronized (lock) {
      queued--;
      lock.notifyAll();
    }
  }

  /**
   * The calling thread begins a run it was handed ({@link #queued()}): until {@link #exit()}, it
   * counts as running one.
   *
   * @return false, and nothing is listed, if close() has already cut the runs short: a run a worker
   *     takes from the queue after that must not begin (its event is handed back instead, and
   *     {@link #notRun()} called once it has been: until then it still counts as queued)
   */
  public boolean enter() {
    synchronized (lock) {
      if (cut) {
        return false;
      }
      queued--;
      push();
      return true;
    }
  }

  /**
   * The calling thread, inside {@code processDue}, is about to claim an event and run it: until
   * {@link #exit()}, it counts as running one (as a worker's run, but not handed over by a poll:
   * nothing {@linkplain #queued() queued}). The caller checks, after this, that close() had not been
   * called: so either it sees close() and claims nothing, or close() sees this run and waits for it.
   *
   * @return false, and nothing is listed, if close() has already cut the runs short
   */
  public boolean enterDue() {
    synchronized (lock) {
      if (cut) {
        return false;
      }
      push();
      return true;
    }
  }

  private void push() {
    Thread self = Thread.currentThread();
    running.put(self, new Run(running.get(self)));
  }

  /**
   * The calling thread's run is bounded by {@code limit} from now on: see {@link #cutShort()} and
   * {@link #stopTimingCaller()}. Nothing for a thread that is not running one of the events.
   *
   * @param untimed undoes what the limit does besides the interrupt (its lease abandoned): run by
   *     {@link #stopTimingCaller()} on the caller's thread, once the limit can no longer pass; it
   *     must not block
   */
  public void timedBy(RunWatchdog.Run limit, Runnable untimed) {
    synchronized (lock) {
      Run r = running.get(Thread.currentThread());
      if (r != null) {
        r.limit = limit;
        r.untimed = untimed;
      }
    }
  }

  /**
   * A handler's own close(): its run is no longer bounded by the maximum run time (it waits in
   * close() for the other runs, and the watchdog's interrupt, meant for the handler, would end that
   * wait as if the caller wanted close() over). Nor by what the limit did to its lease: the
   * {@code untimed} given to {@link #timedBy} runs, so that a run whose limit had passed holds its
   * event again while close() waits (a grace longer than the lease would otherwise let another
   * processor run the event beside it).
   *
   * @return whether the limit had already passed (the watchdog interrupted the calling thread);
   *     false for a thread that is not running one of the events, or whose run is not timed
   */
  public boolean stopTimingCaller() {
    // Every run of the thread, not only the innermost: a worker's handler that calls processDue,
    // whose handler then closes the processor, is still timed by the worker's run below.
    List<Run> timed = new ArrayList<>();
    synchronized (lock) {
      for (Run r = running.get(Thread.currentThread()); r != null; r = r.outer) {
        if (r.limit != null) {
          timed.add(r);
        }
      }
    }
    boolean exceeded = false;
    for (Run r : timed) {
      // After end(), no beat interrupts this thread any more (RunWatchdog excludes the two), so
      // exceeded() read after it is final.
      r.limit.end();
      r.untimed.run();
      exceeded |= r.limit.exceeded();
    }
    return exceeded;
  }

  /**
   * The calling thread's innermost run is over, its outcome recorded (or nothing was claimed). If
   * close() interrupted an outer run of the thread whose handler still runs, the thread is
   * interrupted again for that handler (the inner one may have used the interrupt up).
   */
  public void exit() {
    synchronized (lock) {
      Thread self = Thread.currentThread();
      Run r = running.get(self);
      if (r == null || r.outer == null) {
        running.remove(self);
      } else {
        running.put(self, r.outer);
        if (outerInterruptedByCutRunning(r)) {
          // cutShort interrupted the thread once for all its runs, and the inner handler may have
          // used that interrupt up (caught it and returned, or thrown a failure wrapping it; review
          // rpd3): the outer handler, cut short or overran, is given it back as the call returns.
          self.interrupt();
        }
      }
      lock.notifyAll();
    }
  }

  /** {@return whether the calling thread is running one of the events, between enter and exit} */
  public boolean callerIsRunning() {
    synchronized (lock) {
      return running.containsKey(Thread.currentThread());
    }
  }

  /**
   * The calling thread's run is about to call its handler: from now until {@link #handlerEnded},
   * close() may interrupt the thread. Before, it never does: the thread is then in the processor's
   * own code (a claim, a hand-back, a dead letter no handler sees), and for a {@code processDue}
   * run it is the app's thread, which would carry an interrupt nothing of its own asked for back to
   * the app.
   *
   * @return false if close() has already cut the runs short: the handler must not start (the
   *     caller hands the event back, unrun, so that no handler starts after close() returned);
   *     true for a thread that is not running one of the events
   */
  public boolean handlerStarts() {
    synchronized (lock) {
      if (cut) {
        return false;
      }
      Run r = running.get(Thread.currentThread());
      if (r != null) {
        r.handlerRunning = true;
      }
      return true;
    }
  }

  /**
   * The calling thread's handler has returned or thrown: close() no longer interrupts this run.
   * If close() cut the run short but the handler returned normally (it finished its work anyway, or
   * had returned just before the cut's interrupt landed), the interrupt close() made is taken back
   * here, so that neither the outcome's recording nor the app's thread after {@code processDue}
   * sees it; an interrupt the thread already had before the cut is left. An outer run of the
   * thread whose handler runs on (cut short too, or overran and interrupted again) gets it back at
   * {@link #exit()}.
   * One interrupt flag serves all: an interrupt the app or the handler itself set after the cut is
   * taken back with it.
   *
   * @param returnedNormally whether the handler returned rather than threw
   * @return whether close() interrupted the run before (cut it short); false for a thread that is
   *     not running one of the events between enter and exit
   */
  public boolean handlerEnded(boolean returnedNormally) {
    synchronized (lock) {
      Run r = running.get(Thread.currentThread());
      if (r == null) {
        return false;
      }
      r.handlerEnded = true;
      // An outer handler still running gets the interrupt back at exit(), once this run's outcome
      // is recorded.
      if (r.cut && returnedNormally && !r.interruptedBeforeCut) {
        // Under the lock: cutShort interrupts only under it, and no more for this run from now on.
        Thread.interrupted();
      }
      return r.cut;
    }
  }

  /**
   * Whether an outer run of the thread, whose handler still runs, was interrupted by the cut, as cut
   * short or, if it had overran, again (its handler may have swallowed the watchdog's interrupt,
   * review rpd2): it still needs that interrupt. Not one the cut skipped (the closing thread's own
   * runs, a handler's kill switch nested in it: review rpd4).
   */
  private static boolean outerInterruptedByCutRunning(Run r) {
    for (Run o = r.outer; o != null; o = o.outer) {
      if (o.interruptedByCut && !o.handlerEnded) {
        return true;
      }
    }
    return false;
  }

  /**
   * close(), after its grace: interrupts the threads whose handlers are running (between
   * {@link #handlerStarts()} and {@link #handlerEnded}), but not the calling thread (a handler's own
   * close() does not cut its run short), marks those runs cut short, and lets no run begin, nor any
   * handler start, from now on. Runs whose handler has not started (a claim, a hand-back, a dead
   * letter recorded without a handler) or has ended are not interrupted: the thread is in the
   * processor's own code, and the outcome of an ended one is its own, being recorded. The runs the watchdog has already
   * interrupted are interrupted again (a handler may have swallowed the first interrupt) but not
   * marked: they overran before close() cut anything, and are judged so. Idempotent.
   */
  public void cutShort() {
    Thread self = Thread.currentThread();
    synchronized (lock) {
      cut = true;
      for (Map.Entry<Thread, Run> t : running.entrySet()) {
        if (t.getKey() == self) {
          continue;
        }
        boolean interrupt = false;
        boolean interruptedBefore = t.getKey().isInterrupted();
        // Each of the thread's stacked runs whose handler still runs (an outer handler waits in a
        // nested processDue whose run is recording its outcome): each is judged by this mark.
        for (Run r = t.getValue(); r != null; r = r.outer) {
          if (r.handlerRunning && !r.handlerEnded && !r.cut) {
            // overran() takes the watchdog's lock, under which its beat marks and interrupts a
            // run: either the beat came first (the run overran) or it comes after this mark (the
            // run was cut short). The watchdog never takes this lock, so the nesting cannot deadlock.
            r.cut = !r.overran();
            r.interruptedBeforeCut = interruptedBefore;
            r.interruptedByCut = true;
            interrupt = true;
          }
        }
        if (interrupt) {
          t.getKey().interrupt();
        }
      }
    }
  }

  /**
   * Waits until no thread but the caller is running an event, and no run handed to the pool is
   * still to begin or to hand its event back.
   *
   * @param nanos the longest wait; {@link Long#MAX_VALUE} is about 292 years
   * @return whether the others had all ended within it
   * @throws InterruptedException if the caller is interrupted while waiting
   */
  public boolean awaitOthers(long nanos) throws InterruptedException {
    // Differences of nanoTime readings stay right across the overflow of start + nanos.
    long start = System.nanoTime();
    Thread self = Thread.currentThread();
    synchronized (lock) {
      while (!othersDone(self)) {
        long left = nanos - (System.nanoTime() - start);
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
      return true;
    }
  }

  private boolean othersDone(Thread self) {
    return queued == 0 && (running.isEmpty() || (running.size() == 1 && running.containsKey(self)));
  }

  /** One thread's run. */
  private static final class Run {
    final Run outer;  // the run this one is nested in, on the same thread; null if none
    boolean handlerRunning;  // guarded by the outer lock: handlerStarts() said yes
    boolean handlerEnded;  // guarded by the outer lock
    boolean interruptedBeforeCut;  // guarded by the outer lock: the thread was already interrupted when cut
    boolean interruptedByCut;  // guarded by the outer lock: cutShort interrupted the thread for this run
    boolean cut;  // guarded by the outer lock
    RunWatchdog.Run limit;  // guarded by the outer lock; null until timed (never, for an untimed run)
    Runnable untimed;  // guarded by the outer lock; set with limit

    Run(Run outer) {
      this.outer = outer;
    }

    /**
     * Whether the maximum run time of this run, or of a run it is nested in whose handler still
     * runs, has passed: a processDue run nested in a handler has no limit of its own, it runs on the
     * time of the worker's run it is in, and a handler that limit interrupted failed an attempt, as
     * docs/webhooks.md says, even if close() interrupts it again (review rpd5). Not the limit of a
     * run whose handler has ended (a listener's processDue after it): that limit interrupts nothing
     * more (review rpd6).
     */
    boolean overran() {
      if (limit != null && limit.exceeded()) {
        return true;
      }
      for (Run o = outer; o != null; o = o.outer) {
        if (o.handlerRunning && !o.handlerEnded && o.limit != null && o.limit.exceeded()) {
          return true;
        }
      }
      return false;
    }
  }
}
