package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import java.io.ByteArrayInputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * maxBodyBytes accepts any positive int, but the InputStream path reads cap + 1 bytes: with
 * Integer.MAX_VALUE that overflows, and every delivery without a small Content-Length (chunked)
 * throws instead of being verified and stored.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class LargestBodyCapTest {
  @TempDir
  Path dir;

  @Test
  void aStreamedDeliveryIsAcceptedWithTheLargestAllowedCap() throws Exception {
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookReceiver r = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
          .secret(ReceiverTest.SECRET).maxBodyBytes(Integer.MAX_VALUE).build(), inbox).build();
      byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
      WebhookDelivery d = WebhookSigner.STANDARD_WEBHOOKS.sign(ReceiverTest.SECRET, "msg_1", "order.paid",
          java.time.Instant.now(), body);
      Map<String, List<String>> h = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
      d.headers().forEach((k, v) -> h.put(k, List.of(v)));  // no Content-Length: sent chunked
      WebhookResponse resp = r.handle("POST", h, new ByteArrayInputStream(body));
      assertEquals(200, resp.status(), resp.body());
    }
  }
}
