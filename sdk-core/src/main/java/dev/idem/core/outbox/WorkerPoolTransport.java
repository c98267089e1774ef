package dev.idem.core.outbox;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * A synchronous {@link Transport} run on a worker pool, so the dispatcher drives every transport
 * through {@link dev.idem.core.IdempotentExecutor#resumeAsync} and holds no thread of its own
 * during backoff; only the attempt itself occupies a worker.
 *
 * <p>A pool that refuses the task (it is shut down, as when the dispatcher stops) means that
 * nothing was sent, so the attempt fails with {@link RequestNotSentException}, which the
 * classifier sees as safe to send again. An {@link IOException} from the transport reaches the
 * executor as the cause of a {@link CompletionException}, as any failed async attempt does.
 *
 * @param transport sends one attempt on a worker thread
 * @param workers runs the attempts; owned by whoever created it
 */
record WorkerPoolTransport(Transport transport, Executor workers) implements AsyncTransport {
  @Override
  public CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key) {
    Attempt attempt = new Attempt(transport, request, key);
    try {
      workers.execute(attempt);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(new RequestNotSentException("the worker pool is shut down", e));
    }
    return attempt.result;
  }

  /**
   * One attempt, queued for a worker or running on one. Not {@code supplyAsync}: a pool shut down
   * with {@code shutdownNow} drops the queued tasks, whose futures then never complete, and the
   * executor never learns that the attempt ended; the dispatcher tells a dropped one here instead.
   */
  static final class Attempt implements Runnable {
    final CompletableFuture<ResponseSnapshot> result = new CompletableFuture<>();
    private final Transport transport;
    private final RequestSnapshot request;
    private final IdempotencyKey key;

    Attempt(Transport transport, RequestSnapshot request, IdempotencyKey key) {
      this.transport = transport;
      this.request = request;
      this.key = key;
    }

    @Override
    public void run() {
      if (result.isDone()) {
        return; // cancelled while it waited for a worker (its attempt timeout): never sent
      }
      try {
        result.complete(transport.send(request, key));
      } catch (IOException | RuntimeException | Error e) {
        result.completeExceptionally(new CompletionException(e));
      }
    }

    /** Dropped from the pool's queue before a worker took it: nothing was sent. */
    void dropped() {
      result.completeExceptionally(new CompletionException(new RequestNotSentException(
          "the dispatcher stopped before a worker sent this attempt", null)));
    }
  }
}
