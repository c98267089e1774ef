package dev.idem.core.spi;

import dev.idem.core.IdempotencyKey;
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
   * @param request what to send: on a live execution the app's request, secrets included; when a
   *     journaled operation is resumed, the journaled snapshot, whose secret headers the transport
   *     must re-apply
   * @param key the idempotency key, the same on every attempt
   * @return a future of the buffered response
   */
  CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key);
}
