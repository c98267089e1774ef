package dev.idem.core.outbox;

import dev.idem.core.internal.AgeLimitAwareTransport;
import dev.idem.core.internal.NotSentLocally;
import dev.idem.core.internal.PastAgeLimitException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A synchronous {@link Transport} run on a worker pool, so the dispatcher drives every transport
 * through {@link dev.idem.core.IdempotentExecutor#resumeAsync} and holds no thread of its own
 * during backoff; only the attempt itself occupies a worker.
 *
 * <p>A pool whose {@code execute} throws, before a worker took the attempt, means that nothing
 * was sent, so the attempt fails with {@link RequestNotSentException}, which the classifier sees
 * as safe to send again, with what the pool threw as its cause: a refusal (it is shut down, as
 * when the dispatcher stops), an app-given pool's own failure, or the JVM's (a
 * {@code ThreadPoolExecutor} that cannot start a worker throws
 * {@code OutOfMemoryError: unable to create native thread}). The executor records such an attempt
 * as not sent and, for the JVM's own Error, leaves the operation PENDING and passes the Error on
 * as it is, which stops the dispatcher. An attempt that a worker took although {@code execute}
 * threw (the task was queued before the pool failed) is that worker's to send and report; the
 * Error is then passed on at once, as the transport's own. One that {@link #close()} dropped while
 * {@code execute} ran is not sent, as when {@code execute} throws first: it fails with
 * {@link RequestNotSentException}, what the pool threw as its cause. An {@link IOException} from the
 * transport reaches the executor as the cause of a {@link CompletionException}, as any failed
 * async attempt does.
 *
 * <p>The executor claims the operation (its lease starts) when it hands the attempt over here, not
 * when a worker takes it. An attempt that waited for a worker for {@code maxWait} or longer is not
 * sent ({@link RequestNotSentException}): its lease may have run out meanwhile and another owner
 * taken the operation over and delivered it, and even if not, too little of the lease is left for
 * the attempt itself. The executor then records it as not sent and claims the operation afresh
 * before its next attempt, which a takeover makes it lose.
 *
 * <p>The executor checks the operation's age limit at that claim too, and hands the limit over
 * with the attempt ({@link AgeLimitAwareTransport}): an attempt that a worker takes at or past it
 * is not sent ({@link PastAgeLimitException}), since the server may have forgotten its key by then,
 * and the executor ends the operation at its age limit, UNCERTAIN or FAILED, without recording an
 * attempt.
 *
 * <p>When the dispatcher stops ({@link #close()}), the attempts still waiting for a worker are
 * not sent, whoever's the pool is: an app-given pool is not the dispatcher's to shut down, and its
 * queue would otherwise have a worker send them after the dispatcher closed.
 */
final class WorkerPoolTransport implements AgeLimitAwareTransport {
  private final Transport transport;
  private final Executor workers;
  private final Clock clock;
  private final Duration maxWait;
  /** The attempts handed to the pool that no worker took yet, for {@link #close()}. */
  private final Set<Attempt> queued = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /**
   * @param transport sends one attempt on a worker thread
   * @param workers runs the attempts; owned by whoever created it
   * @param clock measures how long an attempt waited for a worker
   * @param maxWait the longest wait after which an attempt is still sent (half the executor's lease)
   */
  WorkerPoolTransport(Transport transport, Executor workers, Clock clock, Duration maxWait) {
    this.transport = transport;
    this.workers = workers;
    this.clock = clock;
    this.maxWait = maxWait;
  }

  /**
   * The dispatcher stopped: every attempt no worker took yet ends not sent, now, and so does any
   * attempt handed over from now on (a delivery that was letting one go as the dispatcher
   * stopped). Idempotent.
   */
  void close() {
    closed = true;
    // After the flag: an attempt added after this pass sees it (sendAsync adds, then reads it).
    for (Attempt attempt : queued) {
      attempt.dropped();
    }
  }

  @Override
  public CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key) {
    return sendAsync(request, key, null);
  }

  /** @param ageLimit from this instant a worker does not send the attempt; null for none */
  @Override
  public CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key,
      Instant ageLimit) {
    Attempt attempt = new Attempt(this, request, key, ageLimit);
    queued.add(attempt);
    if (closed) {
      attempt.dropped();
      return attempt.result;
    }
    try {
      workers.execute(attempt);
    } catch (RuntimeException | Error e) {
      // Any throwable, not only a refusal: the attempt's own flag, not the exception's class, says
      // whether a worker may still send it (a ThreadPoolExecutor queues the task before it starts a
      // worker, which can then fail), and taking it here makes sure none will.
      String why = e instanceof RejectedExecutionException ? "the worker pool is shut down"
          : "the worker pool failed to take the attempt (" + e.getClass().getName() + ")";
      if (attempt.notSent(why, e)) {
        return attempt.result;
      }
      if (attempt.takenByWorker()) {
        if (e instanceof Error error) {
          throw error;
        }
        return attempt.result;
      }
      // close() dropped it while execute ran (no one else holds its future yet, so no cancel did):
      // still never sent, and what the pool threw is told with it, as when this catch ends it. Its
      // own future, ended without that cause, is one no caller will see.
      return CompletableFuture.failedFuture(new CompletionException(new NotSentLocally(why, e)));
    }
    return attempt.result;
  }

  /**
   * One attempt, queued for a worker or running on one. Not {@code supplyAsync}: a pool shut down
   * with {@code shutdownNow} drops the queued tasks, whose futures then never complete, and the
   * executor never learns that the attempt ended; the dispatcher tells a dropped one here instead.
   */
  static final class Attempt implements Runnable {
    final CompletableFuture<ResponseSnapshot> result = new NotStartedAware();
    /**
     * Null until a worker took the attempt ({@link Taker#WORKER}) or it ended unsent before one
     * did ({@link Taker#NOT_SENT}): exactly one of them wins this, and which one says whether the
     * attempt may have been sent.
     */
    private final AtomicReference<Taker> taken = new AtomicReference<>();
    private final WorkerPoolTransport pool;
    private final RequestSnapshot request;
    private final IdempotencyKey key;
    private final Instant queuedAt;
    /** The operation's age limit, from which the attempt is not sent; null for none. */
    private final Instant ageLimit;

    Attempt(WorkerPoolTransport pool, RequestSnapshot request, IdempotencyKey key, Instant ageLimit) {
      this.pool = pool;
      this.request = request;
      this.key = key;
      this.ageLimit = ageLimit;
      this.queuedAt = pool.clock.instant();
    }

    @Override
    public void run() {
      if (!taken.compareAndSet(null, Taker.WORKER)) {
        return; // cancelled or dropped while it waited for a worker: never sent
      }
      pool.queued.remove(this);
      Instant now = pool.clock.instant();
      if (ageLimit != null && !now.isBefore(ageLimit)) {
        // Checked first: past the limit the operation ends, where a long wait only defers it.
        result.completeExceptionally(new CompletionException(new PastAgeLimitException("the attempt waited for a"
            + " worker until " + now + ", at or past its operation's age limit " + ageLimit + " (maxPendingAge),"
            + " so it was not sent: the server may have forgotten its key")));
        return;
      }
      Duration waited = Duration.between(queuedAt, now);
      if (waited.compareTo(pool.maxWait) >= 0) {
        result.completeExceptionally(new CompletionException(new NotSentLocally("the attempt waited "
            + waited + " for a worker, at least half the executor's lease (" + pool.maxWait + "), so it was not"
            + " sent: another owner may have taken the operation over meanwhile. Add syncWorkers or lower"
            + " maxInFlight if this recurs", null)));
        return;
      }
      try {
        result.complete(pool.transport.send(request, key));
      } catch (IOException | RuntimeException | Error e) {
        result.completeExceptionally(new CompletionException(e));
      } catch (Exception e) {
        // A checked exception the transport throws undeclared (OkHttp 5's InterruptedException
        // when a stopping dispatcher interrupts a worker while it connects): the attempt may be
        // out. Left uncaught, the attempt's future never completed.
        IOException io;
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
          io = new InterruptedIOException("the attempt was interrupted");
        } else {
          io = new IOException("the transport threw " + e.getClass().getName());
        }
        io.initCause(e);
        result.completeExceptionally(new CompletionException(io));
      }
    }

    /** Dropped before a worker took it (the dispatcher stopped): nothing was sent. */
    void dropped() {
      notSent("the dispatcher stopped before a worker sent this attempt", null);
    }

    /** Ends the attempt as not sent, unless a worker took it first; returns whether it did. */
    private boolean notSent(String why, Throwable cause) {
      if (!taken.compareAndSet(null, Taker.NOT_SENT)) {
        return false;
      }
      pool.queued.remove(this);
      result.completeExceptionally(new CompletionException(new NotSentLocally(why, cause)));
      return true;
    }

    /** Whether a worker took the attempt (and may have sent it), rather than it ending unsent. */
    boolean takenByWorker() {
      return taken.get() == Taker.WORKER;
    }

    /** Who ended the attempt's wait for a worker. */
    private enum Taker {
      WORKER,
      NOT_SENT
    }

    /**
     * The attempt's future: cancelled (by the executor's attempt timeout) before a worker took it,
     * it ends as not sent, since nothing was; once a worker has it, a cancel only stops the wait.
     */
    private final class NotStartedAware extends CompletableFuture<ResponseSnapshot> {
      @Override
      public boolean cancel(boolean mayInterruptIfRunning) {
        return notSent("cancelled (its attempt timeout, say) while it waited for a worker", null)
            || super.cancel(mayInterruptIfRunning);
      }
    }
  }
}
