package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
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
 * Review rwh: for a source whose event id is not signed (a {@link GenericHmac} id header outside its
 * signed content), the remembered signature is the only defence against a replay under a new id
 * (docs/webhooks.md, "Answers and rejections": "byte-identical signature again ... (a replay) ->
 * nothing stored"; {@code SignatureDigest}: "the remembered signature is the only defence against a
 * replay under a new id"). But only the signature of the delivery that was <em>accepted</em> is
 * remembered: a provider's retry of the same event, signed again at a later time (the docs' "same
 * event id again (a provider's retry, re-signed)"), is answered 200 duplicate by
 * {@code InboxStore.insert} and nothing of it is stored, its signature included. A captured copy of
 * that retry, re-sent inside its window under a fresh id header, matches no remembered signature and
 * no known id: it is accepted as a new event and the handler runs a second time, without any purge.
 *
 * <p>Here the template signs a time ({@code {timestamp}.{body}}) and the id header is unsigned, the
 * configuration {@code RotationReplayTest.aReplayUnderASignedTimestampButAnUnsignedIdIsRefusedInsideTheWindow}
 * defends for the first delivery. A duplicate whose signature is new to the inbox could be
 * remembered too (its digest kept beside the event) so that its replay is refused the same way.
 */
class RvRwhResignedRetryReplayUnderNewIdTest extends InboxOnVirtualClock {
  static final String SECRET = "acme-s3cret";
  static final Instant T0 = Instant.parse("2026-12-04T09:00:00Z");
  static final String BODY = "{\"order\":42,\"amount\":1299}";

  RvRwhResignedRetryReplayUnderNewIdTest() {
    super(T0);
  }

  static String sign(String content) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    return "sha256=" + HexFormat.of().formatHex(mac.doFinal(content.getBytes(StandardCharsets.UTF_8)));
  }

  static Map<String, List<String>> headers(String id, String ts) throws Exception {
    return Map.of("X-Acme-Signature", List.of(sign(ts + "." + BODY)), "X-Acme-Id", List.of(id),
        "X-Acme-Time", List.of(ts), "X-Acme-Type", List.of("order.paid"));
  }

  @Test
  void aReplayOfAResignedRetryUnderANewIdIsRefused() throws Exception {
    openInbox();
    GenericHmac timed = GenericHmac.builder("X-Acme-Signature").signaturePrefix("sha256=").idHeader("X-Acme-Id")
        .timestampHeader("X-Acme-Time").typeHeader("X-Acme-Type").signedContent("{timestamp}.{body}").build();
    WebhookSource source = WebhookSource.builder("acme", SignatureScheme.hmac(timed)).secret(SECRET)
        .clock(time.clock()).build();
    WebhookReceiver r = WebhookReceiver.builder(source, inbox).build();
    AtomicInteger runs = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox).clock(time.clock()).owner("p1")
        .handler("order.paid", e -> runs.incrementAndGet()).build();
    byte[] body = BODY.getBytes(StandardCharsets.UTF_8);

    String t0 = Long.toString(time.clock().instant().getEpochSecond());
    assertEquals("{\"status\":\"accepted\"}", r.handle("POST", headers("ev-1", t0), body).body());
    assertEquals(1, p.processDue(10));

    // The provider lost our first answer and retries, signed again a minute later: a duplicate.
    time.advance(Duration.ofMinutes(1));
    String t1 = Long.toString(time.clock().instant().getEpochSecond());
    assertEquals("{\"status\":\"duplicate\"}", r.handle("POST", headers("ev-1", t1), body).body());

    // A captured copy of that retry, its unsigned id header changed, inside its window.
    time.advance(Duration.ofSeconds(30));
    WebhookResponse replay = r.handle("POST", headers("ev-2", t1), body);
    p.processDue(10);

    assertEquals(1, runs.get(), "a replay of the provider's re-signed retry under a new unsigned id ran the handler"
        + " again; it was answered " + replay.status() + " " + replay.body());
  }
}
