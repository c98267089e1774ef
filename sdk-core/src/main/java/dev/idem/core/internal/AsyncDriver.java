package dev.idem.core.internal;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.Outcome;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.ResponseSnapshot;
import dev.idem.core.spi.Scheduler;
import dev.idem.core.AttemptTimeoutException;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;

/**
 * Drives an {@link AttemptLoop} with futures: sends through an {@link AsyncTransport}, waits
 * through a {@link Scheduler}, and never blocks a thread while waiting. Every touch of the loop
 * happens under this driver's lock, because the transport's callback, a scheduled task and a
 * cancellation can race.
 *
 * <p>That lock and the journal work it guards never run on the thread that completes an attempt
 * when that thread is someone else's (the HTTP client's callback or completion thread): the work is
 * handed to the executor's own {@code asyncExecutor}, so a slow journal (an fsync, a lock held by
 * another process) cannot hold the client's threads, and with them its connection slots. An
 * attempt that completes on the thread that sent it (a transport that answered at once, or fake
 * time in tests) is handled right there: that thread is ours already.
 */
public final class AsyncDriver {
  private final AttemptLoop loop;
  private final RequestSnapshot request;
  private final IdempotencyKey key;
  private final AsyncTransport transport;
  private final Scheduler scheduler;
  private final CompletableFuture<Outcome> result;
  private final Executor asyncExecutor;

  private boolean onTheWire;
  private Future<?> timer;

  public AsyncDriver(AttemptLoop loop, RequestSnapshot request, IdempotencyKey key, AsyncTransport transport,
      Scheduler scheduler, CompletableFuture<Outcome> result, Executor asyncExecutor) {
    this.asyncExecutor = asyncExecutor;
    this.loop = loop;
    this.request = request;
    this.key = key;
    this.transport = transport;
    this.scheduler = scheduler;
    this.result = result;
    result.whenComplete((o, e) -> {
      if (e instanceof CancellationException) {
        onCancel();
      }
    });
  }

  /** Claims the operation and sends its first attempt; call once. */
  public synchronized void start() {
    try {
      perform(loop.start());
    } catch (IdempotencyException | RuntimeException e) {
      result.completeExceptionally(e);
    } catch (Error e) {
      failOn(e);
    }
  }

  /**
   * An Error (OutOfMemoryError, StackOverflowError, a listener's own) while the driver runs on a
   * transport's or the scheduler's thread. Rethrown there, it would end unseen in that thread's
   * future and the call would never complete; so the call fails with it, and the caller sees it.
   * The operation stays as the journal last recorded it (claimed, until its lease lets a resume take it).
   */
  private void failOn(Error e) {
    result.completeExceptionally(e);
  }

  private void perform(Step step) throws IdempotencyException {
    if (result.isDone()) {
      return;
    }
    if (step instanceof Step.Send) {
      CompletableFuture<ResponseSnapshot> sent;
      onTheWire = true;
      try {
        sent = transport.sendAsync(request, key);
      } catch (RuntimeException e) {
        sent = CompletableFuture.failedFuture(e);
      }
      Optional<Duration> timeout = loop.attemptTimeout();
      if (timeout.isPresent()) {
        sent = withTimeout(sent, timeout.get());
      }
      Thread sender = Thread.currentThread();
      sent.whenComplete((response, error) -> {
        if (Thread.currentThread() == sender) {
          onAttemptDone(response, error);
        } else {
          handOff(() -> onAttemptDone(response, error));
        }
      });
    } else if (step instanceof Step.Wait wait) {
      timer = scheduler.schedule(this::afterWait, wait.delay());
    } else if (step instanceof Step.Done done) {
      result.complete(done.outcome());
    } else {
      result.completeExceptionally(((Step.Fail) step).exception());
    }
  }

  private synchronized void onAttemptDone(ResponseSnapshot response, Throwable error) {
    onTheWire = false;
    try {
      if (result.isCancelled()) {
        loop.interrupted(true, new CancellationException("cancelled while an attempt was on the wire"));
        return;
      }
      Throwable cause = unwrap(error);
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
        result.completeExceptionally(loop.interrupted(true, cause));
        return;
      }
      perform(next);
    } catch (IdempotencyException | RuntimeException e) {
      result.completeExceptionally(e);
    } catch (Error e) {
      failOn(e);
    }
  }

  private void handOff(Runnable work) {
    try {
      asyncExecutor.execute(work);
    } catch (RuntimeException e) {
      // A rejecting executor must not lose the attempt's outcome: do the work here after all.
      work.run();
    }
  }

  private synchronized void afterWait() {
    timer = null;
    try {
      if (!result.isDone()) {
        perform(loop.afterWait());
      }
    } catch (IdempotencyException | RuntimeException e) {
      result.completeExceptionally(e);
    } catch (Error e) {
      failOn(e);
    }
  }

  private synchronized void onCancel() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
    if (!onTheWire) {
      // Waiting between attempts: already PENDING in the journal, or about to be claimed again.
      loop.interrupted(false, new CancellationException("cancelled"));
    }
  }

  /**
   * Fails the attempt with {@link AttemptTimeoutException} when {@code timeout} passes first. The
   * timer runs on the injected scheduler, so fake time drives it in tests.
   */
  private CompletableFuture<ResponseSnapshot> withTimeout(CompletableFuture<ResponseSnapshot> sent, Duration timeout) {
    CompletableFuture<ResponseSnapshot> guarded = new CompletableFuture<>();
    Future<?> timeoutTask = scheduler.schedule(() -> {
      if (guarded.completeExceptionally(new AttemptTimeoutException(timeout))) {
        sent.cancel(true);
      }
    }, timeout);
    sent.whenComplete((r, e) -> {
      timeoutTask.cancel(false);
      if (e != null) {
        guarded.completeExceptionally(e);
      } else {
        guarded.complete(r);
      }
    });
    return guarded;
  }

  /** An already-completed future for a final step: the success, or the failure. */
  public static CompletableFuture<Outcome> completed(Step step) {
    try {
      return CompletableFuture.completedFuture(SyncDriver.finish(step));
    } catch (IdempotencyException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
