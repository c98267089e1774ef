package dev.idem.core;

import java.util.concurrent.CompletableFuture;

/**
 * Sends one attempt of an operation without blocking the caller. The contract is that of
 * {@link Transport}: the future completes with the buffered response, or exceptionally with an
 * {@link java.io.IOException} (possibly wrapped in a {@link java.util.concurrent.CompletionException}).
 */
@FunctionalInterface
public interface AsyncTransport {
  /**
   * Starts sending the request once.
   *
   * @param request the snapshot to send (its secret headers removed)
   * @param key the idempotency key, the same on every attempt
   * @return a future of the buffered response
   */
  CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key);
}
