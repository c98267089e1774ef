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
 *
 * <p>Svix, which wrote the specification, sends the same scheme under {@code svix-id},
 * {@code svix-timestamp} and {@code svix-signature} (Clerk, Resend and others deliver through it),
 * so a delivery without {@code webhook-signature} is read from the {@code svix-*} names. One set or
 * the other, never a mix: a delivery with both is read from the {@code webhook-*} names alone. The
 * signature covers the id and the timestamp whichever names carried them, so accepting both names
 * accepts nothing a sender did not sign.
 */
public final class StandardWebhooksVerifier implements Verifier {
  public static final String ID = "webhook-id";
  public static final String TIMESTAMP = "webhook-timestamp";
  public static final String SIGNATURE = "webhook-signature";
  static final String SVIX_ID = "svix-id";
  static final String SVIX_TIMESTAMP = "svix-timestamp";
  static final String SVIX_SIGNATURE = "svix-signature";

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
    boolean svix = headers.first(SIGNATURE) == null && headers.first(SVIX_SIGNATURE) != null;
    String id = headers.require(svix ? SVIX_ID : ID);
    String ts = headers.require(svix ? SVIX_TIMESTAMP : TIMESTAMP);
    String sigs = headers.require(svix ? SVIX_SIGNATURE : SIGNATURE);
    long timestamp = Verifier.seconds(svix ? SVIX_TIMESTAMP : TIMESTAMP, ts);
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
