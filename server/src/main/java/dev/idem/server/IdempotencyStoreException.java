package dev.idem.server;

/**
 * The store could not be read or written (a database outage, a full in-memory store). Adapters
 * answer 503 with {@code Retry-After}: nothing was claimed, so a retry is safe.
 */
public class IdempotencyStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what failed
   * @param cause the underlying failure, or null
   */
  public IdempotencyStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
