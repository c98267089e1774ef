package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * Review (verify): {@code Verifier.checkWindow} subtracts with plain {@code long} arithmetic. For the
 * signed timestamp {@code Long.MIN_VALUE + now}, {@code now - ts} and {@code ts - now} both overflow to
 * {@code Long.MIN_VALUE}, neither is above the tolerance, and a time 292 billion years ago passes the
 * window. Verification then builds {@code Instant.ofEpochSecond(ts)}, which throws
 * {@code DateTimeException} out of {@code WebhookReceiver.handle}, documented as "never throws for a bad
 * delivery" (the servlet or HttpServer then answers 500 or drops the connection instead of a 400
 * {@code timestamp} rejection, and the sender retries it forever).
 */
class ReviewTimestampOverflowTest extends InboxOnVirtualClock {
  static final String SECRET = ReceiverTest.SECRET;
  static final Instant T0 = Instant.parse("2026-12-01T12:00:00Z");


  @Test
  void aSignedTimestampThatOverflowsTheWindowArithmeticIsATimestampRejectionNotAnException() throws Exception {
    openInbox();
    WebhookSource source = WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET)
        .clock(time.clock()).build();
    WebhookReceiver r = WebhookReceiver.builder(source, inbox).build();

    String ts = Long.toString(Long.MIN_VALUE + T0.getEpochSecond());
    byte[] body = ReceiverTest.body("evt_1", "x");
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(Base64.getDecoder().decode(SECRET.substring(6)), "HmacSHA256"));
    mac.update(("msg_1." + ts + ".").getBytes(StandardCharsets.UTF_8));
    String sig = "v1," + Base64.getEncoder().encodeToString(mac.doFinal(body));
    Map<String, List<String>> h = Map.of("webhook-id", List.of("msg_1"), "webhook-timestamp", List.of(ts),
        "webhook-signature", List.of(sig));

    WebhookResponse answer;
    try {
      answer = r.handle("POST", h, body);
    } catch (RuntimeException e) {
      throw new AssertionError("handle threw for a delivery signed " + ts + " s after the epoch: " + e, e);
    }
    assertEquals(400, answer.status(), answer.body());
    assertEquals("{\"status\":\"rejected\",\"reason\":\"timestamp\"}", answer.body());
  }
}
