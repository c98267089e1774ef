package dev.idem.webhooks;

import java.time.Duration;

/**
 * Hears what the receiver and the processor do, for metrics and logs. Every method has an empty
 * default. Calls come from request and worker threads at the same time, so implementations must be
 * thread-safe and quick; an exception thrown here is logged and ignored. Nothing from a request
 * body or a header reaches a listener: only the source's name, the event type and the reason.
 */
public interface WebhookListener {
  /**
   * A delivery was stored durably as a new event.
   *
   * @param source the source's name
   * @param eventType the event type; empty if none
   */
  default void accepted(String source, String eventType) {}

  /**
   * A delivery of an event already in the inbox was answered 2xx and dropped.
   *
   * @param source the source's name
   */
  default void duplicate(String source) {}

  /**
   * A delivery was refused (REPLAY included: answered 2xx, but never stored).
   *
   * @param source the source's name
   * @param reason why
   */
  default void rejected(String source, RejectionReason reason) {}

  /**
   * A handler returned normally.
   *
   * @param source the source's name
   * @param eventType the event type
   * @param delay from acceptance to the end of the successful run (the processing delay)
   * @param attempts the attempts it took
   */
  default void processed(String source, String eventType, Duration delay, int attempts) {}

  /**
   * A handler failed and will be retried.
   *
   * @param source the source's name
   * @param eventType the event type
   * @param delay until the next attempt
   */
  default void retryScheduled(String source, String eventType, Duration delay) {}

  /**
   * An event became a dead letter.
   *
   * @param source the source's name
   * @param eventType the event type
   */
  default void deadLettered(String source, String eventType) {}

  /** A listener that hears nothing. */
  WebhookListener NONE = new WebhookListener() {};
}
