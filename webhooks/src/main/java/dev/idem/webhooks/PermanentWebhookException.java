package dev.idem.webhooks;

/**
 * Thrown by a handler when retrying cannot help (the event is malformed, refers to something that
 * does not exist, or fails validation): the event goes to the dead letters at once.
 */
public class PermanentWebhookException extends Exception {
  /**
   * Creates the exception for an event that retrying cannot help.
   *
   * @param message why retrying cannot help
   */
  public PermanentWebhookException(String message) {
    super(message);
  }

  /**
   * Creates the exception for an event that retrying cannot help, with the failure behind it.
   *
   * @param message why retrying cannot help
   * @param cause the underlying failure
   */
  public PermanentWebhookException(String message, Throwable cause) {
    super(message, cause);
  }
}
