package dev.idem.webhooks;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * An accepted event, as its handler sees it. Treat it as news that something happened, not as the
 * truth: re-read the object from the sender's API before acting on amounts or states.
 *
 * @param source the source's name
 * @param eventId the provider's event id: stable across redeliveries, re-runs and restarts, so a
 *     handler can key its own side effects with it
 * @param eventType the type; empty if the delivery named none
 * @param body the raw body as signed
 * @param receivedAt when the inbox accepted it
 * @param attempt 1 for the first attempt since it was accepted or re-driven
 */
public record WebhookEvent(String source, String eventId, String eventType, byte[] body, Instant receivedAt,
    int attempt) {
  /** {@return the body decoded as UTF-8} */
  public String bodyAsString() {
    return new String(body, StandardCharsets.UTF_8);
  }
}
