package dev.idem.core.internal;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.spi.Sleeper;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether one executor is open, what runs in it, and what went wrong where no caller could see it.
 *
 * <ul>
 *   <li>Open until {@link #close()}; from then on every call that would journal or send is refused
 *       ({@link #checkUsable}).</li>
 *   <li>The asynchronous executions in progress ({@link AsyncDriver}s): close completes their futures
 *       with an {@code OperationPendingException} at once.</li>
 *   <li>The single flights held for cancelled executions until they write nothing more
 *       ({@link #holdFlight}): close ends the calls waiting on them at once, as it ends the
 *       executions in progress.</li>
 *   <li>The work handed to the pool ({@link #execute}), counted, so that close can wait for journal
 *       writes already running (the app closes its journal next) on the app's pool as on ours.</li>
 *   <li>The calls in progress on the app's threads that write the journal there ({@link #enterSync}:
 *       execute and resume, and enqueue, redrive, reconcileUncertain, resumePending and the start
 *       of executeAsync and resumeAsync), counted too: an attempt on the wire at close runs to its
 *       end and is recorded, and the app closes its journal after close returns, so close waits for
 *       them (but not for the thread calling it, which may be one of them, or one of the threads a
 *       call runs on as part of it: {@link #joinSyncCall}).</li>
 *   <li>A failure in background work that no future can carry (a journal write after a
 *       cancellation, an Error after the caller was told): logged at once, and thrown by the app's
 *       next call as the cause of an {@link IllegalStateException}, once; the calls of Idem's own
 *       engines leave it ({@link #checkOpen}).</li>
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class ExecutorLifecycle {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutorLifecycle.class);
  /**
   * How long close waits for journal work already running and for synchronous attempts' timers:
   * the embedded journal's busy timeout (10 s) is the longest a healthy journal call waits.
   */
  static final Duration CLOSE_GRACE = Duration.ofSeconds(10);
  private final ExecutorPools pools;
  private final AtomicReference<Throwable> backgroundFailure = new AtomicReference<>();
  private final Object lock = new Object();
  private final Set<AsyncDriver> live = new LinkedHashSet<>();  // guarded by lock
  /** How close ends the calls waiting on each flight held for a cancelled execution; guarded by lock. */
  private final Set<Runnable> heldFlights = new HashSet<>();
  private volatile boolean closed;  // written under lock
  private int tasks;  // handed to the pool and not yet finished; guarded by lock
  /**
   * Synchronous calls in progress, on any thread. Not under {@link #lock}: every synchronous call
   * counts itself in and out, and 32 callers taking one monitor twice per call queued on it. Close
   * reads it after setting {@link #closed}, and a call reads {@link #closed} after counting itself
   * in, so at least one of the two sees the other (both are volatile accesses); a call that ends
   * after close wakes it under the lock.
   */
  private final AtomicInteger syncCalls = new AtomicInteger();
  /**
   * What runs on this thread ({@link ThreadCalls}). Its entry is left in place between calls:
   * removing it on every call (and making it again on the next) cost more than the rest of the
   * bookkeeping; it holds one small object per thread that called, and goes with the executor
   * (the map's key is weak).
   */
  private final ThreadLocal<ThreadCalls> threadCalls = ThreadLocal.withInitial(ThreadCalls::new);
  /**
   * Threads of synchronous calls waiting out a backoff ({@link #backOff}), with the mark of the
   * call that waits (null for a call no caller can cancel), so that a cancel wakes only its own
   * call's wait, not that of another call on the same thread; guarded by lock. The keys are every
   * waiting thread, which close wakes.
   */
  private final Map<Thread, CallMark> backingOff = new HashMap<>();
  /** Of those, the ones close interrupted, so that the interrupt is known as close's; guarded by lock. */
  private final Set<Thread> wokenByClose = new HashSet<>();
  /** Of those, the ones {@link #cancelCall} interrupted; guarded by lock. */
  private final Set<Thread> wokenByCaller = new HashSet<>();
  /** Counted down when the first close has waited: a second close waits for it too. */
  private final CountDownLatch closeEnded = new CountDownLatch(1);

  public ExecutorLifecycle(ExecutorPools pools) {
    this.pools = pools;
  }

  /** The executor's scheduler, for timers that only hand work over (see {@link AsyncDriver}). */
  public Scheduler scheduler() {
    return pools.scheduler();
  }

  public boolean isClosed() {
    return closed;
  }

  /**
   * Refuses a call on a closed executor, or reports a background failure not yet reported.
   *
   * @param call what the caller asked for, for the message
   * @throws IllegalStateException if closed, or with a background failure as its cause
   */
  public void checkUsable(String call) {
    checkOpen(call);
    Throwable failure = backgroundFailure.getAndSet(null);
    if (failure != null) {
      throw new IllegalStateException("background work of this IdempotentExecutor failed earlier with " + failure
          + " (logged when it happened; every operation it touched stays in the journal with its key). " + call
          + " was refused before anything was journaled or sent; call again to go on", failure);
    }
  }

  /**
   * Refuses a call on a closed executor, and leaves a background failure for the next call of the
   * app: for the calls Idem's own engines make (an outbox dispatcher's deliveries), which would
   * only log the failure the app was promised ({@link ExecutorAccess}).
   *
   * @param call what the caller asked for, for the message
   * @throws IllegalStateException if closed
   */
  public void checkOpen(String call) {
    if (closed) {
      throw new IllegalStateException("this IdempotentExecutor was closed (close() was called); " + call
          + " was refused before anything was journaled or sent. Build a new executor");
    }
  }

  /**
   * {@link #checkUsable}, and counts a synchronous call in progress until {@link #exitSync}, which
   * the caller must call in a {@code finally}: close waits for it.
   *
   * @param call what the caller asked for, for the message
   * @throws IllegalStateException as {@link #checkUsable}; the call is then not counted
   */
  public void enterSync(String call) {
    checkUsable(call);
    enterChecked(call, false);
  }

  /**
   * {@link #enterSync} for {@code execute} and {@code resume}, the calls an adapter names
   * beforehand for its caller's cancel ({@link #markNextCall}): the call takes the mark taken last
   * on this thread for its depth, if one waits for its call.
   *
   * @param call what the caller asked for, for the message
   * @throws IllegalStateException as {@link #checkUsable}; the call is then not counted
   */
  public void enterMarkedSync(String call) {
    checkUsable(call);
    enterChecked(call, true);
  }

  /**
   * {@link #enterSync} for a call of Idem's own engines: refused if closed, but a background
   * failure is left for the app's next call ({@link #checkOpen}).
   *
   * @param call what the caller asked for, for the message
   * @throws IllegalStateException if closed; the call is then not counted
   */
  public void enterSyncLeavingReport(String call) {
    checkOpen(call);
    enterChecked(call, false);
  }

  private void enterChecked(String call, boolean marked) {
    syncCalls.incrementAndGet();
    if (closed) {
      // Closed since: not counted, and refused the same way; a close already waiting is woken.
      syncEnded();
      checkOpen(call);
    }
    ThreadCalls here = threadCalls.get();
    here.sync++;
    if (marked && here.pending != null) {
      here.bind();
    }
  }

  /**
   * Names the next synchronous call ({@code execute} or {@code resume}) made on this thread at the
   * depth it has now, for {@link #cancelCall}: an adapter takes it just before it calls the
   * executor, and {@link #release}s it once that call has returned. A mark taken after it on this
   * thread for the same depth, before its call started (a keyed call made in between, through
   * another client on this executor), names the call that starts first: the last one taken. No
   * lock: a thread-local stack.
   */
  public CallMark markNextCall() {
    ThreadCalls here = threadCalls.get();
    CallMark mark = new CallMark(Thread.currentThread(), here.sync + 1);
    mark.below = here.pending;
    here.pending = mark;
    return mark;
  }

  /**
   * The call {@code mark} named has returned, or will never be made: no later call takes it. No
   * lock: its cancel, if any, ends with it, since no other call has its mark.
   *
   * @param mark a mark {@link #markNextCall} made
   */
  public void release(CallMark mark) {
    mark.released = true;
    if (Thread.currentThread() == mark.thread && !mark.claimed) {
      threadCalls.get().unlinkPending(mark);
    }
    // On another thread, the mark is dropped by the next call that starts on its own.
  }

  /**
   * Waits out a synchronous call's backoff with {@code sleeper}, unless close comes first: close
   * waits for the synchronous calls in progress, and one sleeping through a long backoff would hold
   * it for its whole grace. Close interrupts the threads waiting here (and {@link #cancelCall}
   * the one whose call was cancelled: the only times Idem interrupts an app's thread, at most once
   * per wait), and that interrupt is cleared before this returns, so the app never sees it. An
   * interrupt of the app's that lands in the same wait is kept: if the wait ended with an
   * {@link InterruptedException} and the thread is still interrupted once Idem's interrupt is in,
   * two interrupts came, one of them the app's, and this throws as for the app's alone. (Two that
   * land before the sleeper wakes make one, which is taken for Idem's: the JDK counts no interrupts.)
   *
   * @return true if the backoff was waited out, or skipped or cut short by {@link #cancelCall}
   *     (the call's transport then refuses the next attempt); false if the executor is closed
   *     (before or during the wait), so the call must stop before its next attempt
   * @throws InterruptedException if the app interrupted the thread; its caller must leave the
   *     thread interrupted, as {@code SyncDriver} does
   */
  public boolean backOff(Sleeper sleeper, Duration delay) throws InterruptedException {
    Thread self = Thread.currentThread();
    CallMark mark = threadCalls.get().running();
    synchronized (lock) {
      if (closed) {
        return false;
      }
      if (mark != null && mark.canceled) {
        return true;
      }
      backingOff.put(self, mark);
    }
    try {
      sleeper.sleep(delay);
    } catch (InterruptedException e) {
      Woken woken = endBackOff(self, true);
      if (woken == Woken.BY_CLOSE) {
        return false;
      }
      if (woken == Woken.BY_CALLER) {
        return true;
      }
      throw e;
    } catch (RuntimeException | Error e) {
      endBackOff(self, false);
      throw e;
    }
    return endBackOff(self, false) != Woken.BY_CLOSE;
  }

  /**
   * For an adapter whose caller cancelled a synchronous call (OkHttp's {@code Call.cancel()} and
   * call timeout stop the attempt on the wire, not a thread that waits): that call, and no other,
   * waits out no backoff and no concurrent execution, whether it has started or not. A backoff it
   * is waiting out now is cut short by an interrupt, which {@link #backOff} clears; one it comes to
   * later is skipped; its wait for a concurrent execution ends ({@link #cancelSignal}). It is never
   * interrupted while it sends or writes the journal, nor is another call on its thread touched (a
   * call nested in it, which its transport makes; one made at the same depth before it started,
   * which has its own mark or none). The call's transport must then refuse the next attempt (a
   * RequestNotSentException caused by an InterruptedIOException), which leaves the operation
   * PENDING with its key. The cancel ends with the call: nothing is taken back, no lock is taken
   * for a call never cancelled, and the thread's later calls, marked anew, back off again.
   *
   * @param call the call, as {@link #markNextCall} named it
   */
  public void cancelCall(CallMark call) {
    CompletableFuture<Void> waiting;
    synchronized (lock) {
      call.canceled = true;
      Thread t = call.thread;
      // The thread waits for this call only if the mark it waits under is this one (a call
      // nested in it, or one made before it started, has its own or none).
      if (backingOff.get(t) == call && !wokenByClose.contains(t) && wokenByCaller.add(t)) {
        t.interrupt();
      }
      waiting = call.waiting;
    }
    if (waiting != null) {
      waiting.complete(null);
    }
  }

  /**
   * For the synchronous call on this thread about to wait for a concurrent execution of its
   * operation: a future that its caller's cancel ({@link #cancelCall}) completes, already complete
   * if the call was cancelled already. Call {@link #endWait} in a {@code finally} once the wait
   * ended. Such a wait is rare (the same operation in flight twice in one process), so it may take
   * the lock.
   */
  public CompletableFuture<Void> cancelSignal() {
    CallMark self = threadCalls.get().running();
    CompletableFuture<Void> signal = new CompletableFuture<>();
    if (self == null) {
      return signal; // no caller can cancel this call
    }
    synchronized (lock) {
      if (self.canceled) {
        signal.complete(null);
      } else {
        self.waiting = signal;
      }
    }
    return signal;
  }

  /** The wait {@link #cancelSignal} was taken for has ended. */
  public void endWait() {
    CallMark self = threadCalls.get().running();
    if (self != null) {
      synchronized (lock) {
        self.waiting = null;
      }
    }
  }

  /** Who interrupted a thread in its backoff, if Idem did; that interrupt is cleared. */
  private enum Woken { NO, BY_CLOSE, BY_CALLER }

  /**
   * @param threw whether the sleeper threw an InterruptedException: one interrupt ended the wait,
   *     so a second one still pending after Idem's is the app's
   */
  private Woken endBackOff(Thread self, boolean threw) {
    Woken woken;
    synchronized (lock) {
      backingOff.remove(self);
      boolean byCaller = wokenByCaller.remove(self);
      woken = wokenByClose.remove(self) ? Woken.BY_CLOSE : byCaller ? Woken.BY_CALLER : Woken.NO;
    }
    // Out of backingOff, the thread gets no more interrupts from Idem: any of Idem's has landed.
    if (woken != Woken.NO && Thread.interrupted() && threw) {
      // Two interrupts (Idem interrupts once per wait): the second is the app's, and backOff throws
      // for it as for the app's alone (its caller leaves the thread interrupted).
      return Woken.NO;
    }
    // Otherwise the one interrupt, which may land after the sleep returned, was Idem's: cleared.
    return woken;
  }

  /**
   * Makes the current thread part of a synchronous call counted on another thread, which waits for
   * this thread before it returns (a resume pass's own threads), until {@link #leaveSyncCall}: a
   * close made here (a resume handler's) is then not waited for by itself, as on the call's own
   * thread, instead of waiting out its grace for the call that waits for this thread. Not counted
   * again: close waits for the call once, on its own thread.
   */
  public void joinSyncCall() {
    threadCalls.get().sync++;
  }

  /** The current thread no longer works for the call it {@link #joinSyncCall joined}. */
  public void leaveSyncCall() {
    threadCalls.get().sync--;
  }

  /** A synchronous call {@link #enterSync} counted has returned or thrown. */
  public void exitSync() {
    threadCalls.get().exit();
    syncEnded();
  }

  private void syncEnded() {
    syncCalls.decrementAndGet();
    if (closed) {
      synchronized (lock) {
        lock.notifyAll();
      }
    }
  }

  /**
   * Background work failed where no caller hears of it: log it now, and keep it (the first one
   * not yet reported) for the next call.
   */
  void backgroundFailed(Throwable failure, String where) {
    LOG.warn("IdempotentExecutor: {} failed in the background; the next call reports it", where, failure);
    backgroundFailure.compareAndSet(null, failure);
  }

  /**
   * Adds an execution in progress; false if closed, when it must not start. Its start (the first
   * claim, on the caller's thread) then counts as running work, which {@link #close} waits for,
   * until {@link #startEnded}: a close that returned while the claim was still in the journal let
   * the claim and its give-back land after it, on a journal the app may have closed. A close made
   * on that thread meanwhile (its transport's first send) is part of the start, and does not wait
   * for it. Call {@link #startEnded} on the same thread.
   */
  boolean register(AsyncDriver driver) {
    ThreadCalls here = threadCalls.get();
    synchronized (lock) {
      if (closed) {
        return false;
      }
      live.add(driver);
      tasks++;
    }
    // The start runs on this thread: a close from inside it (its transport's first send) does not
    // wait for it, as for a synchronous call, or it would wait its whole grace for itself.
    here.starts++;
    return true;
  }

  /** The start of an execution {@link #register} admitted has returned. */
  void startEnded() {
    threadCalls.get().starts--;
    taskEnded();
  }

  void unregister(AsyncDriver driver) {
    synchronized (lock) {
      live.remove(driver);
    }
  }

  /**
   * Adds a single flight held for a cancelled execution until it writes nothing more
   * ({@link AsyncDriver#quietAfterStop}): close runs {@code endWaiters}, which must end the calls waiting on
   * that flight without waiting for the execution (its attempt may never end), take no lock and
   * write nothing. False if closed already: then nobody will, and the caller runs it.
   */
  public boolean holdFlight(Runnable endWaiters) {
    synchronized (lock) {
      return !closed && heldFlights.add(endWaiters);
    }
  }

  /** The flight {@link #holdFlight} added is no longer held: close has nothing to end for it. */
  public void flightReleased(Runnable endWaiters) {
    synchronized (lock) {
      heldFlights.remove(endWaiters);
    }
  }

  /**
   * Hands {@code work} to the pool, counted until it ends; whatever it throws is a background
   * failure, never a dead thread.
   *
   * @throws RejectedExecutionException if the pool refuses it (full, closed, shut down by the app)
   */
  public void execute(Runnable work, String what) {
    synchronized (lock) {
      tasks++;
    }
    Runnable counted = () -> {
      try {
        work.run();
      } catch (RuntimeException | Error e) {
        backgroundFailed(e, what);
      } finally {
        taskEnded();
      }
    };
    try {
      pools.pool().execute(counted);
    } catch (RuntimeException e) {
      taskEnded();
      throw e;
    }
  }

  private void taskEnded() {
    synchronized (lock) {
      tasks--;
      if (tasks == 0) {
        lock.notifyAll();
      }
    }
  }

  /** Whether the app's pool was shut down by the app, so that waiting for it to take work is pointless. */
  boolean poolRefusesForGood() {
    return pools.poolRefusesForGood();
  }

  /**
   * Closes the executor; idempotent. In order: new calls are refused; every asynchronous execution
   * in progress completes with an {@code OperationPendingException} (its operation stays in the
   * journal with its key) and its timers are cancelled, and so does every call waiting on a flight
   * held for a cancelled execution ({@link #holdFlight}); the owned scheduler and pool take no new
   * work; then it waits, up to {@link #CLOSE_GRACE} in all, for work already handed to the pool
   * (journal writes), for the synchronous calls in progress on other threads (an attempt on the
   * wire runs to its end and is recorded, and the call stops before its next one), and for the
   * owned threads to end. What is still running then is interrupted (the owned threads only). A
   * close while another is waiting waits for that one, so that a second close (a framework's, after
   * the app's) never returns while the first still waits.
   */
  public void close() {
    List<AsyncDriver> abandoned;
    List<Runnable> flights = null;
    synchronized (lock) {
      if (closed) {
        abandoned = null;
      } else {
        closed = true;
        abandoned = new ArrayList<>(live);
        live.clear();
        flights = new ArrayList<>(heldFlights);
        heldFlights.clear();
        for (Thread t : backingOff.keySet()) {
          wokenByClose.add(t);
          if (!wokenByCaller.contains(t)) {
            // Its backoff only (backOff clears it): the call then ends PENDING. Never a second
            // interrupt in one wait, which backOff would take for the app's.
            t.interrupt();
          }
        }
      }
    }
    if (abandoned == null) {
      awaitFirstClose();
      return;
    }
    try {
      for (AsyncDriver d : abandoned) {
        d.abandon();
      }
      for (Runnable endWaiters : flights) {
        endWaiters.run();
      }
      pools.shutdown(false);
      Instant deadline = Instant.now().plus(CLOSE_GRACE);
      boolean ended;
      try {
        ended = awaitTasks(deadline) && pools.awaitTermination(deadline);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        ended = false;
      }
      if (!ended) {
        LOG.warn("IdempotentExecutor.close: work still running after {} (a journal call that does not return, or a"
            + " synchronous attempt on the wire); interrupting the executor's own threads", CLOSE_GRACE);
        pools.shutdown(true);
      }
    } finally {
      closeEnded.countDown();
    }
  }

  private void awaitFirstClose() {
    ThreadCalls here = threadCalls.get();
    if (here.sync > 0 || here.starts > 0) {
      return; // called from a synchronous call or a start, which the first close may be waiting for
    }
    try {
      closeEnded.await(CLOSE_GRACE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private boolean awaitTasks(Instant deadline) throws InterruptedException {
    // Close called from within a synchronous call, or an asynchronous one's start: not waited for.
    ThreadCalls here = threadCalls.get();
    int ownCalls = here.sync;
    int ownStarts = here.starts;
    synchronized (lock) {
      while (tasks > ownStarts || syncCalls.get() > ownCalls) {
        long millis = Duration.between(Instant.now(), deadline).toMillis();
        if (millis <= 0) {
          return false;
        }
        lock.wait(millis);
      }
      return true;
    }
  }

  /**
   * What runs on one thread, that thread's only: the synchronous calls in progress there (nested:
   * a transport may call the executor) and the starts of asynchronous executions
   * ({@link #register}), which a close made on that thread is part of and does not wait for; and
   * the marks of its calls ({@link #markNextCall}), on two stacks: those waiting for their call
   * to start, the last taken on top, and those of the calls in progress, innermost on top.
   */
  private static final class ThreadCalls {
    int sync;
    int starts;
    CallMark pending;
    CallMark bound;

    /** The mark of the synchronous call this thread runs now, or null if none named it. */
    CallMark running() {
      CallMark b = bound;
      return b != null && b.depth == sync ? b : null;
    }

    /**
     * The call that just started at depth {@link #sync} takes the last mark taken for that depth,
     * if any. Marks closed meanwhile, and those taken inside a call that has since returned (for a
     * depth deeper than this call's), are dropped: their calls will never start.
     */
    void bind() {
      CallMark m = pending;
      while (m != null && (m.released || m.depth > sync)) {
        m = m.below;
      }
      if (m != null && m.depth == sync) {
        pending = m.below;
        m.claimed = true;
        m.below = bound;
        bound = m;
      } else {
        pending = m;
      }
    }

    /** The synchronous call at depth {@link #sync} has ended, and with it its mark's binding. */
    void exit() {
      CallMark b = bound;
      if (b != null && b.depth == sync) {
        bound = b.below;
        b.below = null;
      }
      sync--;
    }

    void unlinkPending(CallMark mark) {
      CallMark above = null;
      for (CallMark m = pending; m != null; above = m, m = m.below) {
        if (m == mark) {
          if (above == null) {
            pending = m.below;
          } else {
            above.below = m.below;
          }
          m.below = null;
          return;
        }
      }
    }
  }
}
