package dev.idem.core.spi.adapter;

import dev.idem.core.internal.Futures;
import dev.idem.core.Operation;
import dev.idem.core.OperationFailedException;
import dev.idem.core.Outcome;
import dev.idem.core.spi.Transport;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * How an adapter runs a keyed call to its {@link Settlement}, the same way in every adapter: the
 * executor's outcome or FAILED-with-a-response becomes the answer; anything else is thrown, after
 * {@code release} has let go of the last attempt's live response (no one will read its body).
 *
 * <p>Stateless and thread-safe.
 */
public final class Settling {
  private Settling() {}

  /**
   * Runs {@code op} on the calling thread and settles it.
   *
   * @param rules the adapter's rules and executor
   * @param op the operation
   * @param transport the transport of its attempts
   * @param release lets go of the last attempt's response; run before anything is thrown
   * @return the settlement, SUCCEEDED or FAILED with the server's response
   * @throws IOException what the executor or {@link AdapterSupport#settle(OperationFailedException)}
   *     throws (uncertain, pending, key reused, failed without a response, key missing)
   */
  public static Settlement execute(AdapterSupport rules, Operation op, Transport transport, Runnable release)
      throws IOException {
    try {
      try {
        return rules.settle(rules.executor().execute(op, transport));
      } catch (OperationFailedException e) {
        return rules.settle(e);
      }
    } catch (IOException | RuntimeException | Error e) {
      release.run();
      throw e;
    }
  }

  /**
   * Settles an asynchronous execution when it ends.
   *
   * @param rules the adapter's rules
   * @param execution the executor's {@code executeAsync} future
   * @param release lets go of the last attempt's response; run before the result fails
   * @return the settlement; or fails with what {@link #execute} would throw, unwrapped
   */
  public static CompletableFuture<Settlement> settleAsync(AdapterSupport rules, CompletableFuture<Outcome> execution,
      Runnable release) {
    CompletableFuture<Settlement> settled = new CompletableFuture<>();
    execution.whenComplete((outcome, error) -> {
      Throwable cause = error == null ? null : unwrap(error);
      try {
        if (cause == null) {
          settled.complete(rules.settle(outcome));
          return;
        }
        if (cause instanceof OperationFailedException failed) {
          settled.complete(rules.settle(failed));
          return;
        }
      } catch (Exception | Error e) {
        cause = e;
      }
      release.run();
      settled.completeExceptionally(cause);
    });
    return settled;
  }

  /**
   * The cause a future's {@link CompletionException} or {@link ExecutionException} wraps.
   *
   * @param t a future's failure
   * @return the innermost cause that is not such a wrapper
   */
  public static Throwable unwrap(Throwable t) {
    return Futures.unwrap(t);
  }

  /**
   * A future's failure as what a blocking HTTP call throws: an {@link IOException} as is, a
   * {@link RuntimeException} or {@link Error} rethrown, anything else wrapped.
   *
   * @param t the failure, possibly wrapped by a future
   * @return the {@link IOException} to throw
   */
  public static IOException asIOException(Throwable t) {
    Throwable cause = unwrap(t);
    if (cause instanceof RuntimeException re) {
      throw re;
    }
    if (cause instanceof Error err) {
      throw err;
    }
    return cause instanceof IOException io ? io : new IOException(cause);
  }
}
