package dev.idem.webhooks.internal;

import dev.idem.webhooks.WebhookRejectedException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
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

  /** The signed content is {@code id.timestamp.body}. */
  @Override
  public boolean signsTimestampAndId() {
    return true;
  }

  /** {@code webhook-id} is in the signed content. */
  @Override
  public boolean signsEventId() {
    return true;
  }

  @Override
  public MacKey key(String secret) {
    String b64 = secret.startsWith("whsec_") ? secret.substring(6) : secret;
    byte[] key = Hmac.fromBase64(b64);
    if (key == null || key.length == 0) {
      throw new IllegalArgumentException("a Standard Webhooks secret is whsec_ followed by base64");
    }
    return new MacKey("HmacSHA256", key);
  }

  @Override
  public SchemeResult verify(Headers headers, byte[] body, List<MacKey> keys, long now, long tolerance)
      throws WebhookRejectedException {
    String id = headers.require(ID);
    String ts = headers.require(TIMESTAMP);
    String sigs = headers.require(SIGNATURE);
    long timestamp = Verifier.seconds(TIMESTAMP, ts);
    byte[] prefix = (id + "." + ts + ".").getBytes(StandardCharsets.UTF_8);
    List<byte[]> given = new ArrayList<>();
    for (String entry : sigs.split(" ")) {
      // other versions (v1a is asymmetric) are not ours to check
      if (entry.startsWith("v1,")) {
        given.add(Hmac.fromBase64(entry.substring(3)));
      }
    }
    List<byte[]> matched = Verifier.match(name(), keys, false, given, prefix, body);
    Verifier.checkWindow(timestamp, now, tolerance);
    return new SchemeResult(id, null, timestamp, matched);
  }
}
