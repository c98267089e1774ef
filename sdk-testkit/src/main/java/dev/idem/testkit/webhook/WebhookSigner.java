package dev.idem.testkit.webhook;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signs deliveries the way each provider does, independently of the receiving module's code (so
 * the receiver's tests do not check it against itself).
 */
public enum WebhookSigner {
  /** Standard Webhooks: {@code webhook-id}, {@code webhook-timestamp}, {@code webhook-signature: v1,<base64>}. */
  STANDARD_WEBHOOKS {
    @Override
    Map<String, String> headers(String secret, String id, String type, Instant at, byte[] body) {
      String ts = Long.toString(at.getEpochSecond());
      byte[] key = Base64.getDecoder().decode(secret.startsWith("whsec_") ? secret.substring(6) : secret);
      byte[] sig = hmac(key, (id + "." + ts + ".").getBytes(StandardCharsets.UTF_8), body);
      return Map.of("webhook-id", id, "webhook-timestamp", ts, "webhook-signature",
          "v1," + Base64.getEncoder().encodeToString(sig));
    }
  },
  /** Stripe: {@code Stripe-Signature: t=<seconds>,v1=<hex>}; the id and type travel in the body. */
  STRIPE {
    @Override
    Map<String, String> headers(String secret, String id, String type, Instant at, byte[] body) {
      String ts = Long.toString(at.getEpochSecond());
      byte[] sig = hmac(secret.getBytes(StandardCharsets.UTF_8), (ts + ".").getBytes(StandardCharsets.UTF_8), body);
      return Map.of("Stripe-Signature", "t=" + ts + ",v1=" + HexFormat.of().formatHex(sig));
    }
  },
  /** GitHub: {@code X-Hub-Signature-256: sha256=<hex>}, {@code X-GitHub-Delivery}, {@code X-GitHub-Event}. */
  GITHUB {
    @Override
    Map<String, String> headers(String secret, String id, String type, Instant at, byte[] body) {
      byte[] sig = hmac(secret.getBytes(StandardCharsets.UTF_8), new byte[0], body);
      return Map.of("X-Hub-Signature-256", "sha256=" + HexFormat.of().formatHex(sig), "X-GitHub-Delivery", id,
          "X-GitHub-Event", type);
    }
  };

  abstract Map<String, String> headers(String secret, String id, String type, Instant at, byte[] body);

  /**
   * Signs one delivery.
   *
   * @param secret the shared secret as the provider shows it
   * @param eventId the event id (for Stripe it must also be the body's {@code "id"})
   * @param eventType the type
   * @param at the signing time
   * @param body the raw body
   * @return the delivery
   */
  public WebhookDelivery sign(String secret, String eventId, String eventType, Instant at, byte[] body) {
    Objects.requireNonNull(secret, "secret");
    Map<String, String> h = new LinkedHashMap<>(headers(secret, eventId, eventType, at, body));
    h.put("Content-Type", "application/json");
    return new WebhookDelivery(eventId, eventType, h, body);
  }

  /**
   * A small JSON event body with top-level {@code id}, {@code type} and {@code data}.
   *
   * @param eventId the id
   * @param eventType the type
   * @param dataJson the {@code data} value, already JSON
   * @return the UTF-8 bytes
   */
  public static byte[] jsonEvent(String eventId, String eventType, String dataJson) {
    // Quoted by Jackson: an id or type holding a quote or a backslash must still give valid JSON.
    JsonNodeFactory json = JsonNodeFactory.instance;
    return ("{\"id\":" + json.textNode(eventId) + ",\"type\":" + json.textNode(eventType) + ",\"data\":"
            + dataJson + "}")
        .getBytes(StandardCharsets.UTF_8);
  }

  static byte[] hmac(byte[] key, byte[] prefix, byte[] body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      mac.update(prefix);
      return mac.doFinal(body);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
