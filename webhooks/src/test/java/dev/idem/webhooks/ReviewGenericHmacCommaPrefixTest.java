package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
 * Review (verify): Svix-signed providers (Clerk, Resend, ...) send the Standard Webhooks scheme under
 * {@code svix-id}, {@code svix-timestamp} and {@code svix-signature}: {@code standardWebhooks()} reads only
 * the {@code webhook-*} names, so such a provider is described with {@link GenericHmac}, prefix {@code v1,},
 * BASE64, signed content {@code {id}.{timestamp}.{body}}, secret {@code whsec_} base64. The verifier splits
 * the signature header on spaces AND commas before stripping the prefix, so {@code v1,<base64>} becomes
 * {@code v1} and {@code <base64>}, neither of which starts with {@code v1,}: every genuine delivery is
 * answered 401, and build() accepted the description without a word.
 */
class ReviewGenericHmacCommaPrefixTest {
  static final Instant NOW = Instant.ofEpochSecond(1_764_590_400L);
  static final String SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

  static String sign(String content) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(Base64.getDecoder().decode(SECRET.substring(6)), "HmacSHA256"));
    return Base64.getEncoder().encodeToString(mac.doFinal(content.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void aSvixStyleSchemeDescribedWithGenericHmacVerifiesAGenuineDelivery() throws Exception {
    GenericHmac svix = GenericHmac.builder("svix-signature").signaturePrefix("v1,")
        .signatureEncoding(GenericHmac.Encoding.BASE64).idHeader("svix-id").timestampHeader("svix-timestamp")
        .signedContent("{id}.{timestamp}.{body}").secretEncoding(GenericHmac.Encoding.BASE64, "whsec_").build();
    WebhookSource source = WebhookSource.builder("clerk", SignatureScheme.hmac(svix)).secret(SECRET)
        .clock(Clock.fixed(NOW, ZoneOffset.UTC)).build();
    String body = "{\"type\":\"user.created\",\"data\":{}}";
    String ts = Long.toString(NOW.getEpochSecond());
    String sig = "v1," + sign("msg_1." + ts + "." + body);
    Map<String, List<String>> h = Map.of("svix-id", List.of("msg_1"), "svix-timestamp", List.of(ts),
        "svix-signature", List.of(sig));

    // Control: the signature is right. Described without the prefix, the same header verifies (its
    // "v1" piece is simply one more candidate that does not match).
    GenericHmac noPrefix = GenericHmac.builder("svix-signature").signatureEncoding(GenericHmac.Encoding.BASE64)
        .idHeader("svix-id").timestampHeader("svix-timestamp").signedContent("{id}.{timestamp}.{body}")
        .secretEncoding(GenericHmac.Encoding.BASE64, "whsec_").build();
    WebhookSource.builder("clerk", SignatureScheme.hmac(noPrefix)).secret(SECRET)
        .clock(Clock.fixed(NOW, ZoneOffset.UTC)).build().verify(h, body.getBytes(StandardCharsets.UTF_8));

    VerifiedWebhook v;
    try {
      v = source.verify(h, body.getBytes(StandardCharsets.UTF_8));
    } catch (WebhookRejectedException e) {
      throw new AssertionError("a genuine Svix-style delivery was rejected: " + e.getMessage(), e);
    }
    assertEquals("msg_1", v.eventId());
  }
}
