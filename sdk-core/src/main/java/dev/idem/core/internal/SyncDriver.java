package dev.idem.core.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.Outcome;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Scheduler;
import dev.idem.core.spi.Sleeper;
import dev.idem.core.spi.AttemptTimeoutException;
import dev.idem.core.spi.Transport;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;

/**
 * Drives an {@link AttemptLoop} on the calling thread: sends through a {@link Transport}, waits
 * through a {@link Sleeper}. The counterpart of {@link AsyncDriver}; both only perform the steps
 * the loop decides. Every journal call happens on the calling thread; the executor's scheduler
 * only runs the attempt timeout, which interrupts that thread and writes nothing.
 *
 * <p>If the executor is closed while this runs, the attempt on the wire (if any) runs to its end
 * and is recorded, and the call stops before its next attempt or backoff with an
 * {@link OperationPendingException}: the operation is PENDING with its key. Close waits for the
 * call ({@link ExecutorLifecycle#enterSync}), and the app closes the journal after close.
 */
public final class SyncDriver {
  private SyncDriver() {}

  /**
   * Runs the loop to its end and returns the success, or throws the failure. The executor's
   * scheduler runs the attempt timeout, if the policy has one.
   */
  public static Outcome drive(AttemptLoop loop, RequestSnapshot request, IdempotencyKey key, Transport transport,
      Sleeper sleeper, ExecutorLifecycle lifecycle) throws IdempotencyException {
    Step step = loop.start();
    Optional<Duration> attemptTimeout = loop.attemptTimeout();
    while (true) {
      if (step instanceof Step.Send) {
        if (Thread.currentThread().isInterrupted()) {
          // Interrupted before the attempt went out (while the journal claimed it, say, which waits
          // uninterruptibly and restores the flag): nothing is sent, so the attempt is not recorded
          // as one that may have been (a later refusal would then end UNCERTAIN, not FAILED).
          throw loop.interrupted(false, new InterruptedIOException("interrupted before the attempt was sent"));
        }
        ResponseSnapshot response;
        AttemptTimer timer;
        try {
          if (lifecycle.isClosed()) {
            throw new RejectedExecutionException("closed");
          }
          timer = attemptTimeout.map(t -> new AttemptTimer(lifecycle.scheduler(), t)).orElse(null);
        } catch (RejectedExecutionException e) {
          // Closed on another thread (its scheduler takes no timer), or the app's scheduler shut
          // down: nothing is sent; the claim is given back, so the operation is PENDING and due.
          throw loop.interrupted(false, new IllegalStateException((lifecycle.isClosed()
              ? "the IdempotentExecutor was closed" : "the scheduler refused the attempt timeout")
              + " before the next attempt was sent", e));
        }
        try {
          response = transport.send(request, key);
          if (timer != null) {
            // An answer that made it back is used, even if the timer fired just now.
            timer.disarm();
          }
        } catch (IOException e) {
          if (timer != null && timer.disarm()) {
            // Our own timer interrupted the attempt (or it failed after the timeout anyway): a
            // timed-out attempt, ambiguous like a read timeout, not a cancellation by the caller.
            step = loop.onFailure(timer.timeoutException(e));
            continue;
          }
          if (Thread.currentThread().isInterrupted() || isCancellation(e)) {
            // A transport that knows it stopped before writing says so with RequestNotSentException;
            // only then is the interrupted attempt left out of the ambiguous count.
            throw loop.interrupted(!(e instanceof RequestNotSentException), e);
          }
          step = loop.onFailure(e);
          continue;
        } catch (RuntimeException e) {
          if (timer != null) {
            timer.disarm();
          }
          // A failed attempt like any other, not an interruption: retried with the same key, and
          // ambiguous because the request may have gone out (a transport that knows it did not
          // throws RequestNotSentException instead).
          step = loop.onFailure(new TransportFailure(e));
          continue;
        } catch (Error e) {
          if (timer != null) {
            timer.disarm();
          }
          // As AsyncDriver does for its transport's Error: PENDING, the attempt AMBIGUOUS, the
          // breaker's permission given back (else a half-open probe's keeps the host refused for
          // good); the Error itself reaches the caller.
          loop.transportThrew(e);
          throw e;
        } catch (Exception e) {
          // A checked exception the transport does not declare: OkHttp 5's Call.execute throws
          // InterruptedException when the thread is interrupted while it connects (an app's
          // interrupt, or our own attempt timer's). Unhandled, it left the operation IN_FLIGHT under
          // a live lease, with its single flight never completed and its timer still armed.
          InterruptedIOException io = new InterruptedIOException("the attempt ended with "
              + e.getClass().getName());
          io.initCause(e);
          if (timer != null && timer.disarm()) {
            step = loop.onFailure(timer.timeoutException(io));
            continue;
          }
          if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            throw loop.interrupted(true, io);
          }
          step = loop.onFailure(new TransportFailure(new java.lang.reflect.UndeclaredThrowableException(e)));
          continue;
        }
        step = loop.onResponse(response);
      } else if (step instanceof Step.Wait wait) {
        boolean waited;
        try {
          // No backoff before an attempt that will not be sent, and none that outlasts a close:
          // close waits for this call, and the app closes its journal after close.
          waited = lifecycle.backOff(sleeper, wait.delay());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw loop.interrupted(false, e);
        }
        if (!waited) {
          throw loop.interrupted(false, new IllegalStateException(
              "the IdempotentExecutor was closed before the next attempt was sent"));
        }
        step = loop.afterWait();
      } else {
        return finish(step);
      }
    }
  }

  /** The outcome of a final step: returned for Done, thrown for Fail. */
  public static Outcome finish(Step step) throws IdempotencyException {
    if (step instanceof Step.Done done) {
      return done.outcome();
    }
    throw ((Step.Fail) step).exception();
  }

  /**
   * Waits for the single-flight leader's outcome, mapping interruption and cancellation to PENDING.
   * The caller's own cancel ({@link ExecutorLifecycle#cancelCall}) ends the wait too: this call
   * sent nothing, and the leader's execution goes on untouched (no interrupt: the leader's thread
   * and the journal are not this call's).
   *
   * @return the leader's outcome; null if the leader failed before its begin, and the caller must
   *     start over ({@link SingleFlight#leaveNotBegun})
   * @throws OperationPendingException if interrupted, if the leader was cancelled, or if this call
   *     was cancelled by its caller before the leader ended
   */
  public static Outcome awaitLeader(OperationId id, CompletableFuture<Outcome> leader, ExecutorLifecycle lifecycle)
      throws IdempotencyException {
    CompletableFuture<Void> canceled = lifecycle.cancelSignal();
    try {
      if (!leader.isDone()) {
        CompletableFuture.anyOf(leader, canceled).get();
      }
      if (!leader.isDone()) {
        throw new OperationPendingException("the call was cancelled by its caller while it waited for a concurrent"
            + " execution of " + id + ", which goes on", null, id, List.of(), null);
      }
      return leader.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new OperationPendingException("interrupted while waiting for a concurrent execution of " + id, e, id,
          List.of(), null);
    } catch (ExecutionException e) {
      if (SingleFlight.notBegun(e.getCause())) {
        return null;
      }
      if (e.getCause() instanceof IdempotencyException ie) {
        throw ie;
      }
      throw new CompletionException(e.getCause());
    } catch (CancellationException e) {
      throw new OperationPendingException("a concurrent execution of " + id + " was cancelled", e, id, List.of(),
          null);
    } finally {
      lifecycle.endWait();
    }
  }

  /**
   * Interrupts the sending thread when the attempt outlives its timeout. Interrupts only while the
   * attempt is on the wire: {@link #disarm()} and the timer's task exclude each other, and disarm
   * clears an interrupt the timer delivered, so it never leaks into the next attempt or the caller.
   */
  private static final class AttemptTimer {
    private final Thread sender = Thread.currentThread();
    private final Duration timeout;
    private final Future<?> task;
    private boolean armed = true;
    private boolean fired;

    AttemptTimer(Scheduler scheduler, Duration timeout) {
      this.timeout = timeout;
      this.task = scheduler.schedule(this::fire, timeout);
    }

    private synchronized void fire() {
      if (armed) {
        fired = true;
        sender.interrupt();
      }
    }

    /** Stops the timer; returns whether it fired (its interrupt, if still pending, is cleared). */
    synchronized boolean disarm() {
      armed = false;
      task.cancel(false);
      if (fired) {
        Thread.interrupted();
      }
      return fired;
    }

    AttemptTimeoutException timeoutException(IOException cause) {
      AttemptTimeoutException e = new AttemptTimeoutException(timeout);
      e.initCause(cause);
      return e;
    }
  }

  /** A plain InterruptedIOException (not a timeout subclass) anywhere in the chain means cancelled. */
  static boolean isCancellation(Throwable e) {
    for (Throwable t : Causes.of(e)) {
      if (t.getClass() == InterruptedIOException.class) {
        return true;
      }
    }
    return false;
  }
}
