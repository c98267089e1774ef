package dev.idem.core.internal;

import dev.idem.core.spi.RequestNotSentException;

/**
 * An {@link AgeLimitAwareTransport} did not send an attempt because it would have left at or past
 * its operation's age limit. Nothing was sent, so the executor records no attempt for it and ends
 * the operation at its age limit instead ({@link AttemptLoop#notSentAtAgeLimit}).
 */
public final class PastAgeLimitException extends RequestNotSentException {
  private static final long serialVersionUID = 1L;

  public PastAgeLimitException(String message) {
    super(message, null);
  }
}
