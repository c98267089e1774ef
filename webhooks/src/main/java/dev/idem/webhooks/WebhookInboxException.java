package dev.idem.webhooks;

/**
 * The inbox could not do what was asked durably: its store failed, its write queue is full, or its
 * writer thread stopped. When accepting, the receiver answers 503 so that the sender retries;
 * nothing was acknowledged.
 */
public final class WebhookInboxException extends RuntimeException {
  /**
   * Creates the exception for an inbox operation that could not be done durably.
   *
   * @param message what failed
   * @param cause the underlying failure, or null
   */
  public WebhookInboxException(String message, Throwable cause) {
    super(message, cause);
  }
}
