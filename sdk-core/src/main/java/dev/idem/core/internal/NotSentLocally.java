package dev.idem.core.internal;

import dev.idem.core.spi.RequestNotSentException;

/**
 * An attempt not sent for a reason of the client's own (the outbox's worker queue was full too
 * long, its pool refused the task, the dispatcher stopped before a worker took it), not because its
 * host could not be reached: not sent, as any {@link RequestNotSentException}, but nothing the
 * host's circuit breaker should count against it. Ten attempts that waited for a busy worker
 * opened the breaker of a host that had answered everything it was sent, and it then held back the
 * app's inline calls too.
 */
public final class NotSentLocally extends RequestNotSentException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message why, free of secrets
   * @param cause the client's own failure, or null
   */
  public NotSentLocally(String message, Throwable cause) {
    super(message, cause);
  }

  /** Whether {@code failure} is, or was caused by, an attempt not sent for the client's own reason. */
  public static boolean in(Throwable failure) {
    for (Throwable t : Causes.of(failure)) {  // bounded: a cause chain may loop
      if (t instanceof NotSentLocally) {
        return true;
      }
    }
    return false;
  }
}
