package dev.idem.server.internal;

import dev.idem.server.IdempotencyGuard;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a guard's background store calls (lease renewals, the purge) off its scheduler's thread: on
 * the executor the app gave, or on a small pool of the guard's own, which {@link #close()} shuts
 * down within a bounded wait so that the store can be closed next, also when it is called on one
 * of those threads (a {@code GuardListener} that closes the guard on a failed purge).
 *
 * <p>Thread-safe.
 */
public final class StoreCalls implements Executor {
  // The guard's logger, not this class's: operators set levels and filters on the guard's name.
  private static final Logger LOG = LoggerFactory.getLogger(IdempotencyGuard.class);
  // Threads for the background store calls (renewals, the purge). More than one, so that a call
  // that hangs holds back no other claim's renewal; few, since on PostgreSQL each running call
  // holds a connection of the app's pool, and one of SQLite's runs at a time on its connection.
  private static final int STORE_THREADS = 4;
  /** How long {@link #close()} waits for a background store call still running before interrupting it. */
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

  private final Executor calls;
  private final Pool owned;

  /**
   * @param given the app's executor, which the app keeps and shuts down; null for a pool of the
   *     guard's own
   */
  public StoreCalls(Executor given) {
    if (given != null) {
      this.calls = given;
      this.owned = null;
    } else {
      Pool pool = new Pool();
      this.calls = pool;
      this.owned = pool;
    }
  }

  /**
   * Hands a store call over.
   *
   * @param call the call; it checks first whether the guard closed meanwhile
   * @throws java.util.concurrent.RejectedExecutionException if the executor refuses it
   */
  @Override
  public void execute(Runnable call) {
    calls.execute(call);
  }

  /**
   * Takes a call that has not started off the pool's queue, so that it stays there for nothing
   * while hung calls hold every thread: the guard's own pool, or an app's {@link ThreadPoolExecutor}
   * (the Spring starter gives its guards one they share). Does nothing on another kind of executor,
   * whose queue the guard cannot reach, nor for a call already running or done.
   *
   * @param call a call handed to {@link #execute}
   */
  public void remove(Runnable call) {
    if (calls instanceof ThreadPoolExecutor pool) {
      pool.remove(call);
    }
  }

  /**
   * Shuts down the guard's own pool, waiting up to 5 s for the calls still running, then interrupts
   * them with a warning. Called on one of the pool's own threads (from within a store call), it
   * neither waits for nor interrupts its own call: it waits for the others only. Leaves an executor
   * of the app's alone. Idempotent.
   */
  public void close() {
    if (owned == null) {
      return;
    }
    owned.shutdown(); // what is queued returns at once: every call checks closed first
    Thread self = Thread.currentThread();
    try {
      Set<Thread> still = owned.awaitCallsOtherThan(self, CLOSE_WAIT);
      if (!still.isEmpty()) {
        owned.stop(still);
        LOG.warn("Closing the idempotency guard: {} store call(s) (a lease renewal or the purge) still ran after {};"
            + " interrupted them", still.size(), CLOSE_WAIT);
      }
    } catch (InterruptedException e) {
      owned.stop(owned.runningOtherThan(self));
      self.interrupt();
    }
  }

  /**
   * The guard's own pool, which knows which of its threads are running a call: close() waits for
   * those, and awaitTermination cannot serve when close() runs on one of them (it would wait for
   * its own call to end, the full 5 s, then interrupt its own thread).
   */
  private static final class Pool extends ThreadPoolExecutor {
    private final Set<Thread> running = new HashSet<>(); // guarded by itself

    Pool() {
      // Unbounded queue, bounded by what can be in it: each live claim has at most one renewal
      // queued or running (the next is scheduled when it ends, and a claim that finishes takes its
      // queued one out: remove()), and the purge likewise.
      super(STORE_THREADS, STORE_THREADS, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(), threadsNamed());
      allowCoreThreadTimeOut(true); // an idle guard keeps no thread for it
    }

    private static ThreadFactory threadsNamed() {
      AtomicInteger threads = new AtomicInteger();
      return r -> {
        Thread t = new Thread(r, "idem-guard-store-" + threads.incrementAndGet());
        t.setDaemon(true);
        return t;
      };
    }

    @Override
    protected void beforeExecute(Thread t, Runnable r) {
      synchronized (running) {
        running.add(t);
      }
    }

    @Override
    protected void afterExecute(Runnable r, Throwable failure) {
      synchronized (running) {
        running.remove(Thread.currentThread());
        running.notifyAll();
      }
    }

    /** Waits up to {@code limit} for every call but one on {@code self} to end; returns the threads of those left. */
    Set<Thread> awaitCallsOtherThan(Thread self, Duration limit) throws InterruptedException {
      long deadline = System.nanoTime() + limit.toNanos();
      synchronized (running) {
        for (Set<Thread> others = runningOtherThan(self); ; others = runningOtherThan(self)) {
          long left = deadline - System.nanoTime();
          if (others.isEmpty() || left <= 0) {
            return others;
          }
          TimeUnit.NANOSECONDS.timedWait(running, left);
        }
      }
    }

    /**
     * What shutdownNow() does, but for the given threads only: shutdownNow() interrupts every thread
     * of the pool, the caller's too when it is one of them.
     */
    void stop(Set<Thread> calls) {
      getQueue().clear(); // calls that would return at once, but keep what they hold until a thread frees up
      calls.forEach(Thread::interrupt);
    }

    Set<Thread> runningOtherThan(Thread self) {
      synchronized (running) {
        Set<Thread> others = new HashSet<>(running);
        others.remove(self);
        return others;
      }
    }
  }
}
