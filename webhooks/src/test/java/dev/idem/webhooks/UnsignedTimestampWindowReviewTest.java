package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.webhook.WebhookSigner;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * GenericHmac takes a timestampHeader whose value the signed-content template never covers (no
 * {@code {timestamp}}) without a word, and then checks its "window" on that unsigned header: a
 * captured delivery re-sent with a fresh header passes it. Once the event is purged, the replay is
 * accepted and its handler runs a second time, though the source was configured with a window.
 */
class UnsignedTimestampWindowReviewTest extends InboxOnVirtualClock {
  static final String SECRET = "s3cret";


  static String hmac(byte[] body) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(SECRET.getBytes(java.nio.charset.StandardCharsets.UTF_8), "HmacSHA256"));
    return HexFormat.of().formatHex(mac.doFinal(body));
  }

  @Test
  void aCaptureReSentWithAFreshUnsignedTimestampPassesTheWindowAndRunsAgainAfterPurge() throws Exception {
    openInbox();
    // A provider that sends X-Acme-Time; the user sets it as the window's header.
    GenericHmac acme;
    try {
      acme = GenericHmac.builder("X-Acme-Signature").timestampHeader("X-Acme-Time").build();
    } catch (IllegalArgumentException refused) {
      assertTrue(refused.getMessage().contains("{timestamp}"), refused.getMessage());
      return;  // the fix: refused at configuration, as a {timestamp} without its header is
    }
    WebhookReceiver receiver = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.hmac(acme))
        .secret(SECRET).clock(time.clock()).tolerance(Duration.ofMinutes(5)).build(), inbox).build();
    AtomicInteger effects = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox).owner("p1").handler("order.paid", e -> effects.incrementAndGet())
        .build();

    byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{\"amount\":1299}");
    String sig = hmac(body);
    WebhookResponse first = receiver.handle("POST", Map.of("X-Acme-Signature", List.of(sig),
        "X-Acme-Time", List.of(Long.toString(time.clock().instant().getEpochSecond()))), body);
    assertEquals(200, first.status(), first.body());
    p.processDue(10);
    assertEquals(1, effects.get());

    // An hour later, far outside the 5-minute window, finished events older than 30 min are purged.
    time.advance(Duration.ofHours(1));
    assertEquals(1, inbox.purgeDone(Duration.ofMinutes(30)));
    // The attacker re-sends the captured body and signature with the header set to now.
    WebhookResponse replay = receiver.handle("POST", Map.of("X-Acme-Signature", List.of(sig),
        "X-Acme-Time", List.of(Long.toString(time.clock().instant().getEpochSecond()))), body);
    p.processDue(10);

    assertNotEquals("{\"status\":\"accepted\"}", replay.body(),
        "a delivery signed an hour ago passed a 5-minute window on an unsigned timestamp header");
    assertEquals(1, effects.get(), "the handler ran again for the replay");
  }
}
