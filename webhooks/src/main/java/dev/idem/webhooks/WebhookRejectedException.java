package dev.idem.webhooks;

import java.util.Objects;

/**
 * A delivery failed verification. Its message says what was wrong in general terms (which header,
 * how old the timestamp); it never contains the body, a secret or a signature.
 */
public final class WebhookRejectedException extends Exception {
  /** Why the delivery was refused; part of the serialized form. */
  private final RejectionReason reason;

  /**
   * Creates the exception for a delivery that failed verification.
   *
   * @param reason the category
   * @param message what was wrong, without secrets or body bytes
   */
  public WebhookRejectedException(RejectionReason reason, String message) {
    super(reason.tag() + ": " + message);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /**
   * The category of the rejection.
   *
   * @return the reason
   */
  public RejectionReason reason() {
    return reason;
  }
}
