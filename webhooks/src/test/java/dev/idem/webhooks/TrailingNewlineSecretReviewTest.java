package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * A signing secret read from a file keeps the file's last line ending: {@code echo secret > file},
 * {@code kubectl create secret --from-file} and Docker and Kubernetes secret mounts, or an
 * environment variable set from one. WebhookSource took {@code "secret\n"} as the secret: a Stripe,
 * GitHub or UTF-8 generic source was built and then answered 401 "no signature matches" to every
 * delivery the provider signed, and a Standard Webhooks or hex/base64 generic source was refused as
 * "not base64", neither saying why. One trailing line ending ({@code \n} or {@code \r\n}) is now
 * dropped, as Spring Boot's {@code configtree:} does; another line break is refused, naming it;
 * spaces and tabs stay part of the secret.
 */
class TrailingNewlineSecretReviewTest {
  static final String STANDARD = ReceiverTest.SECRET;
  static final String STRIPE = "whsec_test_51HqLyjGaJ8mY0BwK";
  static final String GITHUB = "a GitHub secret, chosen by the repository's owner";

  final VirtualTime time = new VirtualTime(ReceiverTest.T0);

  WebhookSource source(SignatureScheme scheme, String secret) {
    return WebhookSource.builder("acme", scheme).secret(secret).clock(time.clock()).build();
  }

  static Map<String, List<String>> headers(WebhookDelivery d) {
    Map<String, List<String>> h = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    d.headers().forEach((k, v) -> h.put(k, List.of(v)));
    return h;
  }

  void verifiesWhatTheProviderSigned(WebhookSigner signer, SignatureScheme scheme, String secret) throws Exception {
    byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
    WebhookDelivery d = signer.sign(secret, "evt_1", "order.paid", time.clock().instant(), body);
    for (String ending : List.of("\n", "\r\n")) {
      String read = secret + ending;
      WebhookSource s;
      try {
        s = source(scheme, read);
      } catch (IllegalArgumentException e) {
        throw new AssertionError(signer + ": the secret as read from a file (ending " + ending.length()
            + " char) was refused without naming its line ending: " + e.getMessage(), e);
      }
      try {
        assertEquals("evt_1", s.verify(headers(d), body).eventId());
      } catch (WebhookRejectedException e) {
        throw new AssertionError(signer + ": every delivery the provider signs is refused (" + e.getMessage()
            + ") once the secret is read from a file with its trailing line ending", e);
      }
    }
  }

  @Test
  void aSecretWithTheFilesTrailingLineEndingVerifiesWhatTheProviderSigned() throws Exception {
    verifiesWhatTheProviderSigned(WebhookSigner.STRIPE, SignatureScheme.stripe(), STRIPE);
    verifiesWhatTheProviderSigned(WebhookSigner.GITHUB, SignatureScheme.github(), GITHUB);
    verifiesWhatTheProviderSigned(WebhookSigner.STANDARD_WEBHOOKS, SignatureScheme.standardWebhooks(), STANDARD);
  }

  @Test
  void aHexOrBase64GenericSecretWithTheFilesTrailingNewlineIsTakenNotRefusedAsMalformed() throws Exception {
    byte[] key = "generic-key-0123456789".getBytes(StandardCharsets.UTF_8);
    byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    Map<String, List<String>> h = Map.of("X-Sig", List.of(HexFormat.of().formatHex(mac.doFinal(body))));
    GenericHmac hex = GenericHmac.builder("X-Sig").secretEncoding(GenericHmac.Encoding.HEX, "").build();
    GenericHmac b64 = GenericHmac.builder("X-Sig").secretEncoding(GenericHmac.Encoding.BASE64, "").build();

    assertEquals("evt_1", source(SignatureScheme.hmac(hex), HexFormat.of().formatHex(key) + "\n").verify(h, body)
        .eventId());
    assertEquals("evt_1", source(SignatureScheme.hmac(b64), Base64.getEncoder().encodeToString(key) + "\r\n")
        .verify(h, body).eventId());
  }

  @Test
  void aLineBreakLeftOnceOneLineEndingIsDroppedIsRefusedAndNamed() {
    for (String secret : List.of(GITHUB + "\n\n", GITHUB + "\r", "a GitHub secret,\nand the old one")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> WebhookSource.builder("acme", SignatureScheme.github()).secret(secret),
          "a secret holding a line break was taken; every delivery would be refused as unsigned");
      String said = e.getMessage();
      assertTrue(said.contains("webhook source \"acme\"") && said.contains("line break"), said);
      assertFalse(said.contains("GitHub secret"), "the message quotes the secret: " + said);
    }
  }

  @Test
  void aSecretEndingInASpaceOrTabKeepsItAsPartOfTheSecret() throws Exception {
    byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
    for (String secret : List.of(GITHUB + " ", GITHUB + "\t")) {
      WebhookSource s = source(SignatureScheme.github(), secret);
      WebhookDelivery signed = WebhookSigner.GITHUB.sign(secret, "evt_1", "order.paid", time.clock().instant(), body);
      assertEquals("evt_1", s.verify(headers(signed), body).eventId());
      WebhookDelivery stripped = WebhookSigner.GITHUB.sign(GITHUB, "evt_1", "order.paid", time.clock().instant(), body);
      assertEquals(RejectionReason.SIGNATURE,
          assertThrows(WebhookRejectedException.class, () -> s.verify(headers(stripped), body)).reason());
    }
  }
}
