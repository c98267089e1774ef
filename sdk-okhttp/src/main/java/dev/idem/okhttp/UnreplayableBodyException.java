package dev.idem.okhttp;

import dev.idem.core.IdempotencyException;

/**
 * The request body cannot be snapshotted and sent again: it is one-shot
 * ({@code RequestBody.isOneShot()}) or duplex. Thrown by the interceptor before anything is
 * journaled or sent, so the call has had no effect. Send a body that can be written more than once
 * (for example {@code RequestBody.create(bytes, type)}), or do not tag the request.
 */
public class UnreplayableBodyException extends IdempotencyException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception for a request whose body cannot be sent again.
   *
   * @param message which kind of body, and what to do instead
   */
  public UnreplayableBodyException(String message) {
    super(message, null);
  }
}
