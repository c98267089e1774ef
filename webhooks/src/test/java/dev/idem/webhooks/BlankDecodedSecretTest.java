package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Base64;
import org.junit.jupiter.api.Test;

/**
 * Beside a blank secret as written ({@link BlankSecretReviewTest}), every other way a secret can
 * give a key that anyone can sign with: a {@code whsec_} secret whose base64 decodes to blanks or to
 * zero bytes (HMAC pads a short key with zeros, so an all-zero key is the empty key), a
 * {@link GenericHmac} secret that is blank after its prefix or decodes to blanks, and a blank
 * secret added while rotating. Each is refused when the source is built, and the message never
 * quotes the secret.
 */
class BlankDecodedSecretTest {
  static final GenericHmac UTF8_PREFIXED = GenericHmac.builder("X-Sig")
      .secretEncoding(GenericHmac.Encoding.UTF8, "sk_").build();
  static final GenericHmac HEX = GenericHmac.builder("X-Sig").secretEncoding(GenericHmac.Encoding.HEX, "").build();
  static final GenericHmac BASE64 = GenericHmac.builder("X-Sig")
      .secretEncoding(GenericHmac.Encoding.BASE64, "").build();

  static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
  }

  static void refused(SignatureScheme scheme, String secret) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> WebhookSource.builder("acme", scheme).secret(secret),
        "the source took a secret that decodes to a key anyone can sign with");
    String said = e.getMessage();
    assertTrue(said.contains("webhook source \"acme\""), said);
    String printable = secret.strip();
    if (printable.length() > 3) {
      assertFalse(said.contains(printable), "the message quotes the secret: " + said);
    }
  }

  @Test
  void aStandardWebhooksSecretDecodingToBlanksOrZerosIsRefused() {
    refused(SignatureScheme.standardWebhooks(), "whsec_" + b64("    "));
    refused(SignatureScheme.standardWebhooks(), "whsec_" + b64(" \t\r\n"));
    refused(SignatureScheme.standardWebhooks(), "whsec_" + b64("\0\0\0\0\0\0"));
    refused(SignatureScheme.standardWebhooks(), " \n");
  }

  @Test
  void aGenericHmacSecretBlankAfterItsPrefixOrDecodingToBlanksIsRefused() {
    refused(SignatureScheme.hmac(UTF8_PREFIXED), "sk_   ");
    refused(SignatureScheme.hmac(UTF8_PREFIXED), "sk_\u2003\u00a0");
    refused(SignatureScheme.hmac(HEX), "20202020");
    refused(SignatureScheme.hmac(HEX), "00000000");
    refused(SignatureScheme.hmac(BASE64), b64("\t\t\t"));
  }

  @Test
  void aBlankSecretAddedWhileRotatingIsRefused() {
    WebhookSource.Builder b = WebhookSource.builder("acme", SignatureScheme.github()).secret("current-secret");
    assertThrows(IllegalArgumentException.class, () -> b.secret("\t"));
    WebhookSource.Builder s = WebhookSource.builder("acme", SignatureScheme.stripe()).secret("whsec_current");
    assertThrows(IllegalArgumentException.class, () -> s.secret("\u2003"));
  }
}
