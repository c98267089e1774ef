package dev.idem.webhooks.internal;

import dev.idem.webhooks.WebhookRejectedException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Standard Webhooks (standardwebhooks.com): HMAC-SHA256 over {@code id.timestamp.body}, the key
 * being the base64 after {@code whsec_}; {@code webhook-signature} holds space-separated
 * {@code v1,<base64>} entries, any of which may match (the sender signs with old and new secrets
 * while rotating).
 */
public final class StandardWebhooksVerifier implements Verifier {
  public static final String ID = "webhook-id";
  public static final String TIMESTAMP = "webhook-timestamp";
  public static final String SIGNATURE = "webhook-signature";

  @Override
  public String name() {
    return "standard-webhooks";
  }

  @Override
  public byte[] key(String secret) {
    String b64 = secret.startsWith("whsec_") ? secret.substring(6) : secret;
    byte[] key = Hmac.fromBase64(b64);
    if (key == null || key.length == 0) {
      throw new IllegalArgumentException("a Standard Webhooks secret is whsec_ followed by base64");
    }
    return key;
  }

  @Override
  public SchemeResult verify(Headers headers, byte[] body, List<byte[]> keys, long now, long tolerance)
      throws WebhookRejectedException {
    String id = headers.require(ID);
    String ts = headers.require(TIMESTAMP);
    String sigs = headers.require(SIGNATURE);
    long timestamp = Verifier.seconds(TIMESTAMP, ts);
    byte[] prefix = (id + "." + ts + ".").getBytes(StandardCharsets.UTF_8);
    byte[] matched = null;
    for (byte[] key : keys) {
      byte[] expected = Hmac.mac("HmacSHA256", key, prefix, body);
      for (String entry : sigs.split(" ")) {
        int comma = entry.indexOf(',');
        if (comma < 0 || !entry.substring(0, comma).equals("v1")) {
          continue;  // other versions (v1a is asymmetric) are not ours to check
        }
        byte[] given = Hmac.fromBase64(entry.substring(comma + 1));
        if (Hmac.equal(expected, given)) {
          matched = expected;
        }
      }
      if (matched != null) {
        break;
      }
    }
    if (matched == null) {
      throw Verifier.noMatch(name());
    }
    Verifier.checkWindow(timestamp, now, tolerance);
    return new SchemeResult(id, null, timestamp, matched);
  }
}
