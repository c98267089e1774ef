package dev.idem.core.spi;

import dev.idem.core.RetryPolicy;
import java.io.IOException;
import java.time.Duration;

/**
 * An attempt took longer than {@link RetryPolicy#attemptTimeout()}. The request may have reached
 * the server, so the default classifier treats it as AMBIGUOUS.
 */
public class AttemptTimeoutException extends IOException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception for an attempt that ran past its timeout.
   *
   * @param timeout the timeout that ran out
   */
  public AttemptTimeoutException(Duration timeout) {
    super("attempt did not finish within " + timeout);
  }
}
