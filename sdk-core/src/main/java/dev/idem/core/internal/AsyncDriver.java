package dev.idem.core.internal;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.Outcome;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Scheduler;
import dev.idem.core.spi.AttemptTimeoutException;
import dev.idem.core.spi.RequestNotSentException;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Drives an {@link AttemptLoop} with futures: sends through an {@link AsyncTransport}, waits
 * through a {@link Scheduler}, and never blocks a thread while waiting. Every touch of the loop
 * happens under this driver's lock, because the transport's callback, a timer and a cancellation
 * can race.
 *
 * <p>Which thread does the journal work (the loop's claims, records and transitions):
 * <ul>
 *   <li>The first claim and send: the caller's thread, in {@link #start()}.</li>
 *   <li>An attempt's outcome: the thread that sent it, if the transport completed at once (that
 *       thread is ours already); otherwise the executor's pool. The HTTP client's callback thread
 *       only hands it over, so a slow journal (an fsync, a lock held by another process) cannot
 *       hold the client's threads and connection slots. When the pool is full, the client's thread
 *       does the work after all: that slows the client down instead of queueing without bound.</li>
 *   <li>Never a scheduler thread. A timer (the backoff before the next attempt, an attempt's
 *       timeout) only hands its work to the pool, so one executor's slow journal cannot delay
 *       another's timers. When the pool is full, the timer tries again {@link #HANDOFF_RETRY}
 *       later.</li>
 *   <li>Never a thread that cancels the future (or completes it in any other way, see
 *       {@link #caller()}): cancelling only stops the backoff timer and
 *       returns. The journal still learns of it, from the pool: a claim taken while the cancel
 *       came is given back at once (the operation is PENDING and due), and an attempt on the wire
 *       is recorded as ambiguous when it ends (PENDING, sent again with the same key), unless it
 *       ends with {@link RequestNotSentException}: then it is not recorded at all. Until that
 *       last write is done ({@link #quietAfterStop}), the executor keeps the operation's single
 *       flight for this execution.</li>
 * </ul>
 *
 * <p>When the executor closes ({@link #abandon()}), the future fails at once with an
 * {@link OperationPendingException} and the timers stop. A step already running on the pool ends
 * as after a cancel (and the executor keeps the flight until then, {@link #quietAfterStop}), and
 * close waits for it. An attempt still on the wire is not recorded: the
 * operation stays IN_FLIGHT under this executor's lease until the lease expires, and is then
 * resumed (its attempt counted as ambiguous) with the same key.
 */
public final class AsyncDriver {
  /** How long a timer waits before handing its work over again when the pool is full. */
  static final Duration HANDOFF_RETRY = Duration.ofMillis(10);

  private final AttemptLoop loop;
  private final OperationId id;
  private final RequestSnapshot request;
  private final AsyncTransport transport;
  /** The execution's own future: completed only by this driver, by close ({@link #abandon}), or cancelled. */
  private final CompletableFuture<Outcome> result;
  /** The caller's future ({@link #caller()}): completes with {@link #result}; done first, it cancels it. */
  private final CompletableFuture<Outcome> caller = new CompletableFuture<>();
  private final ExecutorLifecycle lifecycle;

  // Guarded by this.
  private boolean onTheWire;
  /** How deep this thread is in the driver's lock (a transport that completes at once nests). Guarded by this. */
  private int held;
  /**
   * Whether the driver may still write the journal for this execution: it holds its lock (a claim,
   * a record, a give-back) or has an attempt on the wire. Written at the lock's outermost entry and
   * exit; read by a cancelling or closing thread, which takes no lock. See {@link #quietAfterStop}.
   */
  private volatile boolean busy;
  /** Set by close ({@link #abandon}) before it fails the result: stopped from outside, as by a cancel. */
  private volatile boolean abandoned;
  /**
   * Set before the driver ends the call PENDING while its attempt is still on the wire (a refused
   * attempt timeout): the call is over, but the attempt is recorded when it ends, as after a cancel.
   */
  private volatile boolean endedOnTheWire;
  /** Completes once, after the call stopped early ({@link #stoppedEarly}), when this execution writes nothing more. */
  private final CompletableFuture<Void> quiet = new CompletableFuture<>();
  /** Nothing more is sent or written for this execution: it ended, or stopped after a cancel or a close. */
  private boolean finished;

  // Set under the lock; read without it by a cancel or a close, which only cancel them.
  private volatile Timer backoff;
  private volatile Timer attemptTimeout;

  public AsyncDriver(AttemptLoop loop, OperationId id, RequestSnapshot request, AsyncTransport transport,
      CompletableFuture<Outcome> result, ExecutorLifecycle lifecycle) {
    this.loop = loop;
    this.id = id;
    this.request = request;
    this.transport = transport;
    this.result = result;
    this.lifecycle = lifecycle;
    Futures.relayStoppingOnEarlyEnd(caller, result);
  }

  /**
   * The future to hand the caller: it completes with the execution's {@code result}, and any other
   * completion of it (a cancel; also {@code orTimeout}, {@code completeOnTimeout}, {@code complete}
   * or {@code completeExceptionally} by the app) cancels the execution, from the completing thread,
   * exactly as a cancel: the backoff timer stops, the attempt on the wire is recorded when it ends,
   * the executor keeps the operation's single flight until then ({@link #stoppedEarly}), and the
   * calls waiting on the flight start over from the journal.
   *
   * <p>Why a future of its own, rather than a flag the driver sets before it completes
   * {@code result} itself: with one shared future every check of "is the call over" in this driver
   * and in the executor would have to tell the driver's completion from the app's, and the value
   * the app put in it (its own TimeoutException, say) would still be what the operation's
   * single-flight followers are handed. Kept apart, {@code result} is completed only by the driver,
   * by close, or by a cancel, so the existing cancel handling covers every early end unchanged, and
   * followers never see a value private to one caller. The price is one more future per execution.
   * The same split as the java.net.http adapter's dependent attempt futures.
   */
  public CompletableFuture<Outcome> caller() {
    return caller;
  }

  /** Claims the operation and sends its first attempt, on the calling thread; call once. */
  public void start() {
    if (!lifecycle.register(this)) {
      OperationPendingException closed = closedPending();
      loop.interrupted(false, closed); // gives back the claim the begin made, if it made one
      result.completeExceptionally(closed);
      return;
    }
    try {
      result.whenComplete((o, e) -> {
        lifecycle.unregister(this);
        if (result.isCancelled()) {
          // On the cancelling thread: no lock, no journal. The pool does the rest (see the class comment).
          cancel(backoff);
          quietIfStopped();
        }
      });
      synchronized (this) {
        enter();
        try {
          perform(loop.start());
        } catch (IdempotencyException | RuntimeException | Error e) {
          fail(e);
        } finally {
          exit();
        }
      }
      quietIfStopped();
    } finally {
      lifecycle.startEnded();
    }
  }

  /**
   * After the call stopped early ({@link #stoppedEarly}): completes once this execution writes nothing
   * more to the journal, at once if it is not writing and has no attempt on the wire, otherwise when
   * the claim or record in progress (and the give-back after it), or the record of the attempt on
   * the wire, is written (after a close: once that attempt ends, recording nothing). Never completes
   * if the call did not stop early, nor while an attempt that never ends is on the wire. Until then this execution holds the operation's lease, which another execution in this
   * process would take over as a dead process's (an ambiguous attempt for a request never sent) and
   * send beside it.
   *
   * <p>Call once {@link #stoppedEarly} is true, from any thread; takes no lock.
   */
  public CompletableFuture<Void> quietAfterStop() {
    quietIfStopped();
    return quiet;
  }

  /**
   * Whether the call ended before this execution did, which may then still write the journal: it
   * was cancelled, close abandoned it ({@link #abandon}), or the driver ended it PENDING with its
   * attempt still on the wire. False when the driver completed the call with its outcome, a failure,
   * or PENDING with nothing more to write. From any thread; takes no lock.
   */
  public boolean stoppedEarly() {
    return abandoned || endedOnTheWire || result.isCancelled();
  }

  /** Whether close stopped this execution ({@link #abandon}); from any thread. */
  public boolean abandoned() {
    return abandoned;
  }

  /** At the lock's outermost entry: from here until {@link #exit}, the journal may be written. */
  private void enter() {
    if (held++ == 0) {
      busy = true;
    }
  }

  /** At the lock's outermost exit, busy only while an attempt is on the wire. */
  private void exit() {
    if (--held == 0) {
      busy = onTheWire;
    }
  }

  /**
   * Completes {@link #quiet} if the call stopped early and the driver is not busy. Called after the
   * lock is released (followers waiting for it start over on this thread, under no lock of this
   * driver's) and by the thread that stopped the call: each writes its own flag (busy; the cancel,
   * {@link #abandoned} or {@link #endedOnTheWire}) before reading the other's, all volatile, so at
   * least one of the two sees both.
   */
  private void quietIfStopped() {
    if (!busy && stoppedEarly()) {
      quiet.complete(null);
    }
  }

  /**
   * The executor is closing: the future fails now, and no timer of this execution fires again.
   * Called on the closing thread; takes no lock and writes nothing.
   */
  void abandon() {
    abandoned = true;
    cancel(backoff);
    cancel(attemptTimeout);
    result.completeExceptionally(closedPending());
  }

  /**
   * Ends the call PENDING because {@code what} was refused; the operation keeps its key for a resume.
   * {@code attemptOnTheWire}: the attempt is still running and is recorded when it ends, so the
   * executor keeps the operation's flight until then ({@link #stoppedEarly}).
   */
  private void endPending(String what, Throwable refusal, boolean attemptOnTheWire) {
    if (attemptOnTheWire) {
      endedOnTheWire = true; // before the result completes: leadAsync reads it then
    }
    result.completeExceptionally(new OperationPendingException(what + "; the operation stays in the journal with its"
        + " key and is sent again by a resume", refusal, id, List.of(), null));
  }

  private OperationPendingException closedPending() {
    return new OperationPendingException("the IdempotentExecutor was closed while operation " + id + " was in"
        + " progress. It stays in the journal with its key " + id.key() + ": PENDING, or, if an attempt was on the"
        + " wire, IN_FLIGHT until this executor's lease on it expires. resumePending, resumeAsync or an"
        + " OutboxDispatcher on a new executor sends it again with the same key", null, id, List.of(), null);
  }

  /**
   * Fails the call with {@code e}: an exception from the loop (a journal failure, say), or an Error
   * (OutOfMemoryError, StackOverflowError, a listener's own) while the driver runs on the pool or a
   * transport's thread, where, rethrown, it would end unseen and the call would never complete. The
   * operation stays as the journal last recorded it. If the call was already over (cancelled,
   * closed), no caller would see {@code e}: it is a background failure, which the next call reports.
   */
  private void fail(Throwable e) {
    finished = true;
    if (!result.completeExceptionally(e)) {
      lifecycle.backgroundFailed(e, "an asynchronous step of " + id + " after its call was over");
    }
  }

  private void perform(Step step) throws IdempotencyException {
    if (result.isDone()) {
      // Cancelled or closed while the loop wrote the journal: send nothing more. A claim just taken
      // is given back, so that the operation is PENDING and due now rather than held until its
      // lease expires; after a Wait it is PENDING already.
      finished = true;
      if (step instanceof Step.Send) {
        release(false, new CancellationException("cancelled or closed before the attempt was sent"));
      }
      return;
    }
    if (step instanceof Step.Send) {
      send();
    } else if (step instanceof Step.Wait wait) {
      try {
        backoff = new Timer(this::afterWait, wait.delay(), "the next attempt of " + id, false);
        if (result.isDone()) {
          backoff.cancel();  // a cancel or close that came while the timer was made may have missed it
        }
      } catch (RejectedExecutionException e) {
        // The operation is PENDING in the journal (the loop wrote that before asking to wait).
        finished = true;
        endPending("the scheduler refused the timer for the next attempt of " + id, e, false);
      }
    } else {
      finished = true;
      Futures.completeFrom(result, completed(step));  // Done or Fail: complete at once
    }
  }

  private void send() {
    CompletableFuture<ResponseSnapshot> sent;
    onTheWire = true;
    try {
      Instant ageLimit = loop.ageLimit();
      // A transport that may hold the attempt (a worker pool's queue) checks the limit again when
      // it lets the attempt go: the claim's check, just before, does not cover the hold.
      sent = ageLimit != null && transport instanceof AgeLimitAwareTransport limited
          ? limited.sendAsync(request, id.key(), ageLimit)
          : transport.sendAsync(request, id.key());
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    } catch (Error e) {
      // Thrown by the call, not through its future: recorded as SyncDriver does (PENDING, the
      // attempt AMBIGUOUS, the permission given back), and no longer on the wire, or the driver
      // would stay busy for good; the Error then fails the call as it is.
      onTheWire = false;
      loop.transportThrew(e);
      throw e;
    }
    Optional<Duration> timeout = loop.attemptTimeout();
    if (timeout.isPresent()) {
      sent = withTimeout(sent, timeout.get());
    }
    Thread sender = Thread.currentThread();
    sent.whenComplete((response, error) -> {
      if (Thread.currentThread() == sender) {
        onAttemptDone(response, error);
        return;
      }
      try {
        lifecycle.execute(() -> onAttemptDone(response, error), "recording an attempt of " + id);
      } catch (RuntimeException e) {
        // The pool is full (or refuses for good): the completing thread records the attempt after
        // all, rather than lose its outcome. Once the executor is closed that writes nothing.
        onAttemptDone(response, error);
      }
    });
  }

  private void onAttemptDone(ResponseSnapshot response, Throwable error) {
    synchronized (this) {
      enter();
      try {
        attemptDone(response, error);
      } finally {
        exit();
      }
    }
    quietIfStopped();
  }

  private void attemptDone(ResponseSnapshot response, Throwable error) {
    onTheWire = false;
    if (finished) {
      return;
    }
    try {
      if (result.isDone()) {
        finished = true;
        if (!lifecycle.isClosed()) {
          // Cancelled while the attempt was on the wire: it may have taken effect, unless the
          // transport says it never sent it (an attempt still queued for a worker when the
          // dispatcher closed, say): recording that one as ambiguous would turn a later permanent
          // refusal into UNCERTAIN although no request with this key ever reached the target.
          if (Futures.unwrap(error) instanceof RequestNotSentException notSent) {
            release(false, new CancellationException("cancelled; the attempt in progress was never sent"));
            Error fatal = AttemptLoop.fatalCauseOfUnsent(notSent);
            if (fatal != null) {
              // Not sent because the JVM is failing: nobody waits for this call, so, as for an
              // Error thrown once the call was over (fail), the next call reports it.
              lifecycle.backgroundFailed(fatal, "the attempt of " + id + " that was not sent after its call was over");
            }
          } else {
            release(true, new CancellationException("cancelled while an attempt was on the wire"));
          }
        }
        return;
      }
      Throwable cause = Futures.unwrap(error);
      if (cause instanceof RequestNotSentException && SyncDriver.isCancellation(cause)) {
        // The transport saw its call cancelled before this attempt was sent (the cancel reached it
        // before it reached this driver's future: the app cancelled while the first claim was
        // written, say). As in SyncDriver: stop, PENDING, and no attempt recorded, since none was
        // sent; recorded as a not-sent attempt it would be retried for a caller who is gone.
        finished = true;
        result.completeExceptionally(loop.interrupted(false, cause));
        return;
      }
      if (cause instanceof PastAgeLimitException pastLimit) {
        // Held by the transport until the age limit, and not sent: ended as at a claim past it.
        perform(loop.notSentAtAgeLimit(pastLimit));
        return;
      }
      Step next;
      if (cause == null) {
        next = loop.onResponse(response);
      } else if (cause instanceof IOException io) {
        next = loop.onFailure(io);
      } else if (cause instanceof RuntimeException re && !(cause instanceof CancellationException)) {
        // A failed attempt, as in SyncDriver: ambiguous unless the transport said it sent nothing.
        next = loop.onFailure(new TransportFailure(re));
      } else {
        // Not an I/O failure: a bug or a cancellation in the transport. The request may have gone out.
        finished = true;
        result.completeExceptionally(loop.interrupted(true, cause));
        return;
      }
      perform(next);
    } catch (IdempotencyException | RuntimeException | Error e) {
      fail(e);
    }
  }

  /** On the pool, when the backoff is over. */
  private void afterWait() {
    synchronized (this) {
      enter();
      try {
        waited();
      } finally {
        exit();
      }
    }
    quietIfStopped();
  }

  private void waited() {
    backoff = null;
    if (finished) {
      return;
    }
    try {
      if (result.isDone()) {
        finished = true;  // PENDING in the journal since the wait began: nothing to give back
        return;
      }
      perform(loop.afterWait());
    } catch (IdempotencyException | RuntimeException | Error e) {
      fail(e);
    }
  }

  /**
   * Leaves the operation PENDING (recording the attempt on the wire, if any, as ambiguous) after the
   * caller went away. A journal failure here loses nothing (the lease expires and the operation is
   * due again), but nobody is waiting to hear of it: it is a background failure.
   */
  private void release(boolean sent, CancellationException why) {
    loop.interrupted(sent, why);
    for (Throwable t : why.getSuppressed()) {
      lifecycle.backgroundFailed(t, "the journal write that leaves " + id + " PENDING after its call was over");
    }
  }

  /**
   * Fails the attempt with {@link AttemptTimeoutException} when {@code timeout} passes first. The
   * timer runs on the executor's scheduler, so fake time drives it in tests; it only hands the
   * timeout to the pool.
   */
  private CompletableFuture<ResponseSnapshot> withTimeout(CompletableFuture<ResponseSnapshot> sent, Duration timeout) {
    CompletableFuture<ResponseSnapshot> guarded = new CompletableFuture<>();
    AtomicBoolean timedOut = new AtomicBoolean();
    Timer timer;
    try {
      timer = new Timer(() -> {
        if (guarded.isDone()) {
          return;
        }
        timedOut.set(true);
        // Cancelled first: a transport whose attempt had not started yet (it waited for a worker
        // or a connection slot) completes it as not sent, which the attempt's record must say
        // rather than "timed out, may have taken effect".
        sent.cancel(true);
        guarded.completeExceptionally(new AttemptTimeoutException(timeout));
      }, timeout, "the attempt timeout of " + id, true);
    } catch (RejectedExecutionException e) {
      // No timer, so nothing would bound this attempt: the call ends PENDING now, and the attempt
      // is recorded (as ambiguous) when it ends, as after a cancel; the flight is kept until then.
      endPending("the scheduler refused the attempt timeout of " + id, e, true);
      return sent;
    }
    attemptTimeout = timer;
    if (lifecycle.isClosed()) {
      timer.cancel();  // a close that came while the timer was made may have missed it
    }
    sent.whenComplete((r, e) -> {
      timer.cancel();
      if (e == null) {
        guarded.complete(r);
      } else if (timedOut.get() && !(Futures.unwrap(e) instanceof RequestNotSentException)) {
        guarded.completeExceptionally(new AttemptTimeoutException(timeout));  // the cancel it caused, say
      } else {
        guarded.completeExceptionally(e);
      }
    });
    return guarded;
  }

  private static void cancel(Timer timer) {
    if (timer != null) {
      timer.cancel();
    }
  }

  /**
   * A timer whose task only hands {@code work} to the pool. If the pool is full it tries again a
   * little later; if the pool was shut down by the app (it refuses for good), the call ends
   * PENDING; if the executor is closed there is nothing left to do, nor for a backoff once the call
   * is over. An attempt timeout still has work after a cancel: it ends the attempt on the wire,
   * which is what lets the stopped execution go quiet and the operation's flight go.
   */
  private final class Timer {
    private final Runnable work;
    private final String what;
    /** An attempt timeout (its work ends the attempt on the wire), not a backoff. */
    private final boolean boundsAttempt;
    private volatile Future<?> scheduled;
    private volatile boolean cancelled;

    /** @throws RejectedExecutionException if the scheduler refuses the timer */
    Timer(Runnable work, Duration delay, String what, boolean boundsAttempt) {
      this.work = work;
      this.what = what;
      this.boundsAttempt = boundsAttempt;
      arm(delay);
    }

    private void arm(Duration delay) {
      scheduled = lifecycle.scheduler().schedule(this::fire, delay);
      if (cancelled) {
        scheduled.cancel(false);
      }
    }

    /** On the scheduler's thread: hand over, never run the work here. */
    private void fire() {
      try {
        handOver();
      } catch (RuntimeException | Error e) {
        // Not into the scheduler's hands, where a Future would keep it unseen.
        lifecycle.backgroundFailed(e, "the timer for " + what);
      }
    }

    private void handOver() {
      if (cancelled) {
        return;
      }
      try {
        lifecycle.execute(work, what);
      } catch (RuntimeException refused) {
        if (cancelled || lifecycle.isClosed() || (result.isDone() && !boundsAttempt)) {
          return;
        }
        try {
          if (!lifecycle.poolRefusesForGood()) {
            arm(HANDOFF_RETRY);
            return;
          }
        } catch (RuntimeException e) {
          if (e != refused) {
            refused.addSuppressed(e);
          }
        }
        endPending("the executor's asyncExecutor refused " + what, refused, boundsAttempt);
      }
    }

    void cancel() {
      cancelled = true;
      Future<?> f = scheduled;
      if (f != null) {
        f.cancel(false);
      }
    }
  }

  /** An already-completed future for a final step: the success, or the failure. */
  public static CompletableFuture<Outcome> completed(Step step) {
    try {
      return CompletableFuture.completedFuture(SyncDriver.finish(step));
    } catch (IdempotencyException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
