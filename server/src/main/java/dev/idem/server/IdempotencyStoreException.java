package dev.idem.server;

/**
 * The store could not be read or written (a database outage, a full in-memory store). When
 * {@link IdempotencyGuard#admit} throws it, adapters answer 503 with {@code Retry-After}: the handler
 * was not run, so a retry is safe. A claim whose commit was not confirmed may be durable, though,
 * and then a retry with the same key is answered "in flight" until that claim's lease runs out.
 */
public class IdempotencyStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception for a store read or write that failed.
   *
   * @param message what failed
   * @param cause the underlying failure, or null
   */
  public IdempotencyStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
