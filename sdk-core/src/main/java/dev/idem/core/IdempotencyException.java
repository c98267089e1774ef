package dev.idem.core;

import java.io.IOException;

/**
 * The base of every exception Idem throws on purpose. It is an {@link IOException} so that HTTP
 * adapters can rethrow it on the path where callers already handle I/O failures.
 */
public class IdempotencyException extends IOException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what happened, free of secrets and request bodies
   * @param cause the underlying failure, or null
   */
  public IdempotencyException(String message, Throwable cause) {
    super(message, cause);
  }
}
