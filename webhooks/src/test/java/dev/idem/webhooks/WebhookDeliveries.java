package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
import dev.idem.testkit.webhook.WebhookSigner;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Events signed as a Standard Webhooks sender signs them, with {@link ReceiverTest#SECRET}, and
 * handed to a receiver over source {@code "acme"} unless a test names another: the one way the
 * processor and close() tests put an event in the inbox, so that each test shows only what it
 * proves.
 */
final class WebhookDeliveries {
  private WebhookDeliveries() {}

  /** A receiver for source {@code "acme"} that reads the test's virtual clock. */
  static WebhookReceiver receiver(WebhookInbox inbox, VirtualTime time) {
    return receiver(inbox, "acme", time);
  }

  /** A receiver for {@code source} that reads the test's virtual clock. */
  static WebhookReceiver receiver(WebhookInbox inbox, String source, VirtualTime time) {
    return WebhookReceiver.builder(WebhookSource.builder(source, SignatureScheme.standardWebhooks())
        .secret(ReceiverTest.SECRET).clock(time.clock()).build(), inbox).build();
  }

  /** Delivers an {@code order.paid} event signed now on the virtual clock; fails unless it is accepted. */
  static void deliver(WebhookReceiver receiver, VirtualTime time, String id) {
    deliver(receiver, time, id, "order.paid");
  }

  /** Delivers an event of {@code type} signed now on the virtual clock; fails unless it is accepted. */
  static void deliver(WebhookReceiver receiver, VirtualTime time, String id, String type) {
    deliver(receiver, time.now(), id, type);
  }

  /** Delivers an event of {@code type} signed at {@code signedAt}; fails unless it is accepted (200). */
  static void deliver(WebhookReceiver receiver, Instant signedAt, String id, String type) {
    byte[] body = WebhookSigner.jsonEvent(id, type, "{}");
    Map<String, List<String>> h = new TreeMap<>();
    WebhookSigner.STANDARD_WEBHOOKS.sign(ReceiverTest.SECRET, id, type, signedAt, body)
        .headers().forEach((k, v) -> h.put(k, List.of(v)));
    assertEquals(200, receiver.handle("POST", h, body).status());
  }
}
