package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * Svix (Clerk, Resend, ...) sends Standard Webhooks under {@code svix-*} names: standardWebhooks()
 * reads them when {@code webhook-signature} is absent, one set of names or the other, never a mix;
 * described with GenericHmac, its {@code v1,} prefix and several signatures verify.
 */
class SvixHeadersTest {
  static final Instant NOW = Instant.ofEpochSecond(1_764_590_400L);
  static final String SECRET = ReceiverTest.SECRET;
  static final String OTHER = ReceiverTest.OLD_SECRET;
  static final String BODY = "{\"type\":\"user.created\",\"data\":{}}";
  static final String TS = Long.toString(NOW.getEpochSecond());

  static String sign(String secret, String content) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(Base64.getDecoder().decode(secret.substring(6)), "HmacSHA256"));
    return "v1," + Base64.getEncoder().encodeToString(mac.doFinal(content.getBytes(StandardCharsets.UTF_8)));
  }

  static WebhookSource source(SignatureScheme scheme, String secret) {
    return WebhookSource.builder("clerk", scheme).secret(secret).clock(Clock.fixed(NOW, ZoneOffset.UTC)).build();
  }

  static VerifiedWebhook verify(WebhookSource s, Map<String, List<String>> h) throws WebhookRejectedException {
    return s.verify(h, BODY.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void standardWebhooksReadsTheSvixNames() throws Exception {
    String sig = sign(SECRET, "msg_1." + TS + "." + BODY);
    VerifiedWebhook v = verify(source(SignatureScheme.standardWebhooks(), SECRET), Map.of("svix-id",
        List.of("msg_1"), "svix-timestamp", List.of(TS), "svix-signature", List.of("v1a,xyz= " + sig)));
    assertEquals("msg_1", v.eventId());
    assertEquals("user.created", v.eventType());
    assertEquals(NOW, v.signedAt().orElseThrow());
  }

  @Test
  void oneSetOfNamesNeverAMix() throws Exception {
    WebhookSource s = source(SignatureScheme.standardWebhooks(), SECRET);
    String sig = sign(SECRET, "msg_1." + TS + "." + BODY);
    // the svix signature with the webhook-* id: the svix-id is what must be there
    WebhookRejectedException e = assertThrows(WebhookRejectedException.class, () -> verify(s, Map.of(
        "webhook-id", List.of("msg_1"), "svix-timestamp", List.of(TS), "svix-signature", List.of(sig))));
    assertEquals(RejectionReason.HEADER, e.reason());
    // both sets: the webhook-* one is read, whatever the svix-* one says
    VerifiedWebhook v = verify(s, Map.of("webhook-id", List.of("msg_1"), "webhook-timestamp", List.of(TS),
        "webhook-signature", List.of(sig), "svix-id", List.of("msg_2"), "svix-timestamp", List.of(TS),
        "svix-signature", List.of("v1,AAAA")));
    assertEquals("msg_1", v.eventId());
    e = assertThrows(WebhookRejectedException.class, () -> verify(s, Map.of("webhook-id", List.of("msg_1"),
        "webhook-timestamp", List.of(TS), "webhook-signature", List.of("v1,AAAA"), "svix-id", List.of("msg_1"),
        "svix-timestamp", List.of(TS), "svix-signature", List.of(sig))));
    assertEquals(RejectionReason.SIGNATURE, e.reason());
  }

  @Test
  void genericHmacWithTheSvixPrefixVerifiesAnyOfSeveralSignatures() throws Exception {
    GenericHmac svix = GenericHmac.builder("svix-signature").signaturePrefix("v1,")
        .signatureEncoding(GenericHmac.Encoding.BASE64).idHeader("svix-id").timestampHeader("svix-timestamp")
        .signedContent("{id}.{timestamp}.{body}").secretEncoding(GenericHmac.Encoding.BASE64, "whsec_").build();
    String content = "msg_1." + TS + "." + BODY;
    Map<String, List<String>> h = Map.of("svix-id", List.of("msg_1"), "svix-timestamp", List.of(TS),
        "svix-signature", List.of(sign(OTHER, content) + " " + sign(SECRET, content)));
    assertEquals("msg_1", verify(source(SignatureScheme.hmac(svix), SECRET), h).eventId());
    assertEquals("msg_1", verify(source(SignatureScheme.hmac(svix), OTHER), h).eventId());
    Map<String, List<String>> tampered = Map.of("svix-id", List.of("msg_2"), "svix-timestamp", List.of(TS),
        "svix-signature", List.of(sign(SECRET, content)));
    assertEquals(RejectionReason.SIGNATURE, assertThrows(WebhookRejectedException.class,
        () -> verify(source(SignatureScheme.hmac(svix), SECRET), tampered)).reason());
  }

  @Test
  void aPrefixWithASpaceIsRefusedAtBuild() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> GenericHmac.builder("X-Sig").signaturePrefix("v1 ").build());
    assertEquals(true, e.getMessage().contains("space"), e.getMessage());
  }
}
