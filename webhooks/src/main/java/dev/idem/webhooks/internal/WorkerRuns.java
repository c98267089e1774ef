package dev.idem.webhooks.internal;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The threads of one processor's pool that are running one of its events now, and which of those
 * runs close() cut short.
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
 * <p>Bounded: a thread is listed only during its run, so at most one per worker, and the runs
 * handed to the pool are at most one per worker (the processor's slots). Thread-safe.
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
      running.put(Thread.currentThread(), new Run());
      return true;
    }
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
    RunWatchdog.Run limit;
    Runnable untimed;
    synchronized (lock) {
      Run r = running.get(Thread.currentThread());
      limit = r == null ? null : r.limit;
      untimed = r == null ? null : r.untimed;
    }
    if (limit == null) {
      return false;
    }
    // After end(), no beat interrupts this thread any more (RunWatchdog excludes the two), so
    // exceeded() read after it is final.
    limit.end();
    untimed.run();
    return limit.exceeded();
  }

  /** The calling thread's run is over, its outcome recorded. */
  public void exit() {
    synchronized (lock) {
      running.remove(Thread.currentThread());
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
   * The calling thread's handler has returned or thrown: close() no longer interrupts this run.
   *
   * @return whether close() interrupted the run before (cut it short); false for a thread that is
   *     not running one of the events between enter and exit ({@code processDue} on the app's thread)
   */
  public boolean handlerEnded() {
    synchronized (lock) {
      Run r = running.get(Thread.currentThread());
      if (r == null) {
        return false;
      }
      r.handlerEnded = true;
      return r.cut;
    }
  }

  /**
   * close(), after its grace: interrupts the threads whose handlers are still running (or about to
   * run), but not the calling thread (a handler's own close() does not cut its run short), marks
   * those runs cut short, and lets no run begin from now on. Runs whose handler has ended are left
   * alone: their outcome is their own, being recorded. The runs the watchdog has already
   * interrupted are interrupted again (a handler may have swallowed the first interrupt) but not
   * marked: they overran before close() cut anything, and are judged so. Idempotent.
   */
  public void cutShort() {
    Thread self = Thread.currentThread();
    synchronized (lock) {
      cut = true;
      for (Map.Entry<Thread, Run> r : running.entrySet()) {
        if (r.getKey() != self && !r.getValue().handlerEnded && !r.getValue().cut) {
          // overran() takes the watchdog's lock, under which its beat marks and interrupts a run:
          // either the beat came first (the run overran) or it comes after this mark (the run was
          // cut short). The watchdog never takes this lock, so the nesting cannot deadlock.
          r.getValue().cut = !r.getValue().overran();
          r.getKey().interrupt();
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
    boolean handlerEnded;  // guarded by the outer lock
    boolean cut;  // guarded by the outer lock
    RunWatchdog.Run limit;  // guarded by the outer lock; null until timed (never, for an untimed run)
    Runnable untimed;  // guarded by the outer lock; set with limit

    boolean overran() {
      return limit != null && limit.exceeded();
    }
  }
}
