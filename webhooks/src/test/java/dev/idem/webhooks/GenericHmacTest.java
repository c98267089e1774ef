package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** The generic scheme, configured for a made-up provider and checked against a MAC computed here. */
class GenericHmacTest {
  static final Instant NOW = Instant.ofEpochSecond(1_764_590_400L);

  static String sign(String secret, String content) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA512");
    mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA512"));
    return HexFormat.of().formatHex(mac.doFinal(content.getBytes(StandardCharsets.UTF_8)));
  }

  WebhookSource source() {
    GenericHmac acme = GenericHmac.builder("X-Acme-Signature").signaturePrefix("sha512=").algorithm("HmacSHA512")
        .idHeader("X-Acme-Id").timestampHeader("X-Acme-Time").typeHeader("X-Acme-Type")
        .signedContent("{timestamp}:{id}:{body}").build();
    return WebhookSource.builder("acme", SignatureScheme.hmac(acme)).secret("s3cret")
        .clock(Clock.fixed(NOW, ZoneOffset.UTC)).build();
  }

  @Test
  void verifiesTheConfiguredContentAndRejectsEachFault() throws Exception {
    String body = "{\"x\":1}";
    String ts = Long.toString(NOW.getEpochSecond() - 10);
    String sig = "sha512=" + sign("s3cret", ts + ":ev-1:" + body);
    Map<String, List<String>> h = Map.of("x-acme-signature", List.of("sha512=00 " + sig), "X-Acme-Id", List.of("ev-1"),
        "X-Acme-Time", List.of(ts), "X-Acme-Type", List.of("thing.done"));

    VerifiedWebhook v = source().verify(h, body.getBytes(StandardCharsets.UTF_8));
    assertEquals("ev-1", v.eventId());
    assertEquals("thing.done", v.eventType());

    assertEquals(RejectionReason.SIGNATURE, assertThrows(WebhookRejectedException.class,
        () -> source().verify(h, "{\"x\":2}".getBytes(StandardCharsets.UTF_8))).reason());
    Map<String, List<String>> noId = Map.of("X-Acme-Signature", List.of(sig), "X-Acme-Time", List.of(ts));
    assertEquals(RejectionReason.HEADER, assertThrows(WebhookRejectedException.class,
        () -> source().verify(noId, body.getBytes(StandardCharsets.UTF_8))).reason());
    String old = Long.toString(NOW.getEpochSecond() - 301);
    Map<String, List<String>> stale = Map.of("X-Acme-Signature", List.of("sha512=" + sign("s3cret", old + ":ev-1:" + body)),
        "X-Acme-Id", List.of("ev-1"), "X-Acme-Time", List.of(old));
    assertEquals(RejectionReason.TIMESTAMP, assertThrows(WebhookRejectedException.class,
        () -> source().verify(stale, body.getBytes(StandardCharsets.UTF_8))).reason());
  }

  @Test
  void aTemplateMustContainTheBodyOnceAndItsPlaceholdersNeedTheirHeaders() {
    assertThrows(IllegalArgumentException.class, () -> GenericHmac.builder("S").signedContent("{id}").build());
    assertThrows(IllegalArgumentException.class, () -> GenericHmac.builder("S").signedContent("{body}{body}").build());
    assertThrows(IllegalArgumentException.class,
        () -> GenericHmac.builder("S").signedContent("{timestamp}.{body}").build());
    String unsignedTime = assertThrows(IllegalArgumentException.class,
        () -> GenericHmac.builder("S").timestampHeader("X-Time").signedContent("{id}.{body}").idHeader("X-Id").build())
        .getMessage();
    assertTrue(unsignedTime.contains("X-Time") && unsignedTime.contains("{timestamp}"), unsignedTime);
  }
}
