package dev.idem.core.spi;

import dev.idem.core.IdempotencyKey;
import java.io.IOException;

/**
 * Sends one attempt of an operation, synchronously. Adapters implement it over a real HTTP client;
 * tests implement it with a script.
 *
 * <p>The transport must put {@code key} into the request (the adapter knows the header name and
 * format), re-apply any secret headers that were kept out of the snapshot, and buffer the
 * response. It throws {@link RequestNotSentException} when it knows that no byte of the request
 * reached the network, which lets the classifier call the failure safe; any other
 * {@link IOException} is treated as ambiguous by default.
 */
@FunctionalInterface
public interface Transport {
  /**
   * Sends the request once.
   *
   * @param request what to send: on a live execution the app's request, secrets included; when a
   *     journaled operation is resumed, the journaled snapshot, whose secret headers the transport
   *     must re-apply
   * @param key the idempotency key to send with it, the same on every attempt
   * @return the buffered response, whatever its status
   * @throws IOException when no response arrived
   */
  ResponseSnapshot send(RequestSnapshot request, IdempotencyKey key) throws IOException;
}
