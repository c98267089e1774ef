package dev.idem.core.spi;

import java.io.IOException;

/**
 * Thrown by a {@link Transport} that knows no byte of the request reached the network (for example
 * the connection was refused, or the host name did not resolve). The default classifier treats it
 * as safe to retry: the server cannot have seen the request, so exhaustion ends in FAILED rather
 * than UNCERTAIN.
 */
public class RequestNotSentException extends IOException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception for a request that never reached the network.
   *
   * @param message what prevented sending
   * @param cause the underlying failure, or null
   */
  public RequestNotSentException(String message, Throwable cause) {
    super(message, cause);
  }
}
