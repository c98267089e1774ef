package dev.idem.spring.webhooks;

import dev.idem.webhooks.WebhookHandler;
import java.util.Objects;

/**
 * A webhook handler as a bean: the starter's processor runs {@code handler} for every verified
 * event of {@code eventType}, from every source, after the sender was answered.
 *
 * <pre>{@code
 * @Bean
 * WebhookSubscription paid(Orders orders) {
 *   return WebhookSubscription.on("payment_intent.succeeded", event -> orders.markPaid(event));
 * }
 * }</pre>
 *
 * See {@link WebhookHandler} for what a handler can rely on (at least once per event id, no
 * order). {@value #ANY} subscribes to every type no other subscription names.
 *
 * @param eventType the event type, as the sender names it (Stripe's {@code type}, GitHub's
 *     {@code X-GitHub-Event}), or {@value #ANY}
 * @param handler the business logic
 */
public record WebhookSubscription(String eventType, WebhookHandler handler) {
  /** The event type of the default handler: every type without a subscription of its own. */
  public static final String ANY = "*";

  /**
   * Checks the components.
   *
   * @param eventType the event type, or {@value #ANY}
   * @param handler the business logic
   * @throws NullPointerException if either is null
   * @throws IllegalArgumentException if the event type is blank
   */
  public WebhookSubscription {
    Objects.requireNonNull(eventType, "eventType");
    Objects.requireNonNull(handler, "handler");
    if (eventType.isBlank()) {
      throw new IllegalArgumentException("an event type must not be blank");
    }
  }

  /**
   * A subscription.
   *
   * @param eventType the event type, or {@value #ANY}
   * @param handler the business logic
   * @return the subscription
   */
  public static WebhookSubscription on(String eventType, WebhookHandler handler) {
    return new WebhookSubscription(eventType, handler);
  }
}
