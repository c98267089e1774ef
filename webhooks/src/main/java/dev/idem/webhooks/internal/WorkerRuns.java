package dev.idem.webhooks.internal;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The threads of one processor's pool that are running one of its events now. close() may be
 * called by a handler (a kill switch, a handler that finds the app misconfigured): waiting for the
 * pool to terminate would then wait for the caller's own run, which cannot end while it waits, so
 * close() asks here whether its caller is one of these threads, and if so waits for the others
 * only.
 *
 * <p>Bounded: a thread is listed only during its run, so at most one per worker. Thread-safe.
 */
public final class WorkerRuns {
  private final Object lock = new Object();
  private final Set<Thread> running = new HashSet<>();  // guarded by lock

  /** The calling thread begins a run: until {@link #exit()}, it counts as running one. */
  public void enter() {
    synchronized (lock) {
      running.add(Thread.currentThread());
    }
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
      return running.contains(Thread.currentThread());
    }
  }

  /**
   * Waits until no thread but the caller is running an event.
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
    return running.isEmpty() || (running.size() == 1 && running.contains(self));
  }
}
