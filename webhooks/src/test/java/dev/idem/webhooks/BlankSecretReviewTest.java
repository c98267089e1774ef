package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.support.InboxRows;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * WebhookSource refuses an empty secret (an unset-but-defined variable) but takes one of blanks,
 * such as {@code STRIPE_WEBHOOK_SECRET=" "} or a secret file holding only a newline: the endpoint
 * then verifies deliveries that anyone can sign, with the blank key, and stores them.
 */
class BlankSecretReviewTest extends InboxOnVirtualClock {

  @Test
  void aBlankSecretIsTakenAndADeliveryForgedWithItIsStored() throws Exception {
    openInbox();
    String blank = " \n";
    WebhookSource source;
    try {
      source = WebhookSource.builder("stripe", SignatureScheme.stripe()).secret(blank).clock(time.clock()).build();
    } catch (IllegalArgumentException refused) {
      return;  // the fix: refused at configuration, as an empty secret is
    }
    WebhookReceiver receiver = WebhookReceiver.builder(source, inbox).build();
    byte[] body = WebhookSigner.jsonEvent("evt_forged", "payment_intent.succeeded", "{\"amount\":100000}");
    WebhookDelivery forged = WebhookSigner.STRIPE.sign(blank, "evt_forged", "payment_intent.succeeded",
        time.clock().instant(), body);
    Map<String, List<String>> h = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    forged.headers().forEach((k, v) -> h.put(k, List.of(v)));
    WebhookResponse r = receiver.handle("POST", h, forged.body());

    assertNotEquals("{\"status\":\"accepted\"}", r.body(),
        "a delivery signed by anyone with the blank secret was accepted; the builder took secret(\" \\n\")");
    assertEquals(0, InboxRows.count(dir));
  }
}
