package dev.idem.webhooks;

import java.time.Duration;

/**
 * Something the receiver or the processor did, as told to a {@link WebhookListener}. Not named
 * "event": a {@link WebhookEvent} is what a provider delivered; an activity is what the inbox did
 * with a delivery or an event. Activities carry the source's name, the event type and reasons,
 * never a body, a header or a secret.
 */
public sealed interface WebhookActivity {
  /** {@return the source's name} */
  String source();

  /**
   * A delivery was stored durably as a new event; {@code eventType} is empty if it named none.
   *
   * @param source the source's name
   * @param eventType the event's type; empty if the delivery named none
   */
  record Accepted(String source, String eventType) implements WebhookActivity {}

  /**
   * A delivery of an event already in the inbox was answered 2xx and dropped.
   *
   * @param source the source's name
   */
  record Duplicate(String source) implements WebhookActivity {}

  /**
   * A delivery was refused (REPLAY included: answered 2xx, but never stored; CONFLICT included: the id
   * of an accepted event with another payload).
   *
   * @param source the source's name
   * @param reason why the delivery was refused
   */
  record Rejected(String source, RejectionReason reason) implements WebhookActivity {}

  /**
   * A handler returned normally; {@code delay} is from acceptance to the end of the successful run
   * (the processing delay), after {@code attempts} attempts.
   *
   * @param source the source's name
   * @param eventType the event's type; empty if the delivery named none
   * @param delay the time from acceptance to the end of the successful run
   * @param attempts the handler runs, counting the successful one
   */
  record Processed(String source, String eventType, Duration delay, int attempts) implements WebhookActivity {}

  /**
   * A handler failed and will be retried after {@code delay}.
   *
   * @param source the source's name
   * @param eventType the event's type; empty if the delivery named none
   * @param delay the wait before the next run
   */
  record RetryScheduled(String source, String eventType, Duration delay) implements WebhookActivity {}

  /**
   * An event became a dead letter.
   *
   * @param source the source's name
   * @param eventType the event's type; empty if the delivery named none
   */
  record DeadLettered(String source, String eventType) implements WebhookActivity {}
}
