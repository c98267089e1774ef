package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testkit.webhook.WebhookSigner;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * The signatures of deliveries answered for a known event ({@code idem_webhook_signatures}): kept
 * only where the event id is unsigned, for a conflict as for a re-signed retry, and gone once
 * their signed time is outside the window.
 */
class AnsweredSignaturesTest extends InboxOnVirtualClock {
  static final String SECRET = "acme-s3cret";
  static final Instant T0 = Instant.parse("2026-12-04T09:00:00Z");

  AnsweredSignaturesTest() {
    super(T0);
  }

  static Map<String, List<String>> headers(String id, String ts, String body) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    String sig = "sha256=" + HexFormat.of().formatHex(mac.doFinal((ts + "." + body).getBytes(StandardCharsets.UTF_8)));
    return Map.of("X-Acme-Signature", List.of(sig), "X-Acme-Id", List.of(id), "X-Acme-Time", List.of(ts),
        "X-Acme-Type", List.of("order.paid"));
  }

  String now() {
    return Long.toString(time.clock().instant().getEpochSecond());
  }

  long remembered() throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("inbox.db"));
        Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM idem_webhook_signatures")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  void aConflictsSignatureIsRememberedAndExpiresWithTheWindow() throws Exception {
    openInbox();
    GenericHmac timed = GenericHmac.builder("X-Acme-Signature").signaturePrefix("sha256=").idHeader("X-Acme-Id")
        .timestampHeader("X-Acme-Time").typeHeader("X-Acme-Type").signedContent("{timestamp}.{body}").build();
    WebhookSource source = WebhookSource.builder("acme", SignatureScheme.hmac(timed)).secret(SECRET)
        .clock(time.clock()).build();
    WebhookReceiver r = WebhookReceiver.builder(source, inbox).build();
    AtomicInteger runs = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox).clock(time.clock()).owner("p1")
        .handler("order.paid", e -> runs.incrementAndGet()).build();
    String body = "{\"order\":42}";
    String other = "{\"order\":43}";

    assertEquals("{\"status\":\"accepted\"}", r.handle("POST", headers("ev-1", now(), body),
        body.getBytes(StandardCharsets.UTF_8)).body());
    assertEquals(0, remembered(), "a new event's accept writes no remembered signature");

    time.advance(Duration.ofSeconds(30));
    Map<String, List<String>> conflict = headers("ev-1", now(), other);
    assertEquals("{\"status\":\"duplicate\",\"reason\":\"conflict\"}", r.handle("POST", conflict,
        other.getBytes(StandardCharsets.UTF_8)).body());
    assertEquals(1, remembered());

    Map<String, List<String>> underNewId = new java.util.HashMap<>(conflict);
    underNewId.put("X-Acme-Id", List.of("ev-2"));
    assertEquals("{\"status\":\"duplicate\",\"reason\":\"replay\"}", r.handle("POST", underNewId,
        other.getBytes(StandardCharsets.UTF_8)).body(), "a copy of the conflict under a new id is a replay");
    p.processDue(10);
    assertEquals(1, runs.get(), "only the accepted event ran");

    time.advance(source.tolerance().plusSeconds(2));
    inbox.purgeDone(source.tolerance());
    assertEquals(0, remembered(), "its signed time is outside the window: a replay of it is refused by the window");
    assertEquals(0L, inbox.counts().get(InboxState.DONE), "and the event, signed as late, went too");
  }

  @Test
  void aSignedIdRemembersNoAnsweredSignature() throws Exception {
    openInbox();
    WebhookSource source = WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(ReceiverTest.SECRET)
        .clock(time.clock()).build();
    WebhookReceiver r = WebhookReceiver.builder(source, inbox).build();
    byte[] body = ReceiverTest.body("evt_1", "pay");
    assertEquals("{\"status\":\"accepted\"}", ReceiverTest.post(r, WebhookSigner.STANDARD_WEBHOOKS.sign(
        ReceiverTest.SECRET, "msg_1", "payment.succeeded", time.clock().instant(), body)).body());
    time.advance(Duration.ofMinutes(1));
    assertEquals("{\"status\":\"duplicate\"}", ReceiverTest.post(r, WebhookSigner.STANDARD_WEBHOOKS.sign(
        ReceiverTest.SECRET, "msg_1", "payment.succeeded", time.clock().instant(), body)).body());
    assertEquals(0, remembered(), "a replay under another id would fail its signature: nothing to remember");
  }
}
