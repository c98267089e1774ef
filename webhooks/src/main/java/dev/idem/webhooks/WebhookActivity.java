package dev.idem.webhooks;

import java.time.Duration;

/**
 * Something the receiver or the processor did, as told to a {@link WebhookListener}. Not named
 * "event": a {@link WebhookEvent} is what a provider delivered; an activity is what the inbox did
 * with a delivery or an event. Activities carry the source's name, the event type and reasons,
 * never a body, a header or a secret.
 */
public sealed interface WebhookActivity {
  /** @return the source's name */
  String source();

  /** A delivery was stored durably as a new event; {@code eventType} is empty if it named none. */
  record Accepted(String source, String eventType) implements WebhookActivity {}

  /** A delivery of an event already in the inbox was answered 2xx and dropped. */
  record Duplicate(String source) implements WebhookActivity {}

  /** A delivery was refused (REPLAY included: answered 2xx, but never stored). */
  record Rejected(String source, RejectionReason reason) implements WebhookActivity {}

  /**
   * A handler returned normally; {@code delay} is from acceptance to the end of the successful run
   * (the processing delay), after {@code attempts} attempts.
   */
  record Processed(String source, String eventType, Duration delay, int attempts) implements WebhookActivity {}

  /** A handler failed and will be retried after {@code delay}. */
  record RetryScheduled(String source, String eventType, Duration delay) implements WebhookActivity {}

  /** An event became a dead letter. */
  record DeadLettered(String source, String eventType) implements WebhookActivity {}
}
