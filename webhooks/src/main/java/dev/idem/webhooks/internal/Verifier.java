package dev.idem.webhooks.internal;

import dev.idem.webhooks.RejectionReason;
import dev.idem.webhooks.WebhookRejectedException;
import java.util.List;

/** One signature scheme. Implementations are immutable and thread-safe. */
public interface Verifier {
  /** The scheme's name, such as {@code "stripe"}. */
  String name();

  /**
   * The HMAC key for a secret as the provider shows it.
   *
   * @throws IllegalArgumentException if the secret is malformed for this scheme
   */
  byte[] key(String secret);

  /**
   * Checks the signature over the raw body, then the timestamp window.
   *
   * @param keys the keys of every configured secret, newest first
   * @param nowSeconds the receiver's clock
   * @param toleranceSeconds how far a signed timestamp may be from now, either way
   */
  SchemeResult verify(Headers headers, byte[] body, List<byte[]> keys, long nowSeconds, long toleranceSeconds)
      throws WebhookRejectedException;

  /** Rejects a timestamp more than {@code tolerance} seconds away from now, either way. */
  static void checkWindow(long timestamp, long now, long tolerance) throws WebhookRejectedException {
    if (now - timestamp > tolerance) {
      throw new WebhookRejectedException(RejectionReason.TIMESTAMP,
          "signed " + (now - timestamp) + " s ago, more than the tolerance of " + tolerance + " s");
    }
    if (timestamp - now > tolerance) {
      throw new WebhookRejectedException(RejectionReason.TIMESTAMP,
          "signed " + (timestamp - now) + " s in the future, more than the tolerance of " + tolerance + " s");
    }
  }

  /** Parses epoch seconds, or rejects the header as malformed. */
  static long seconds(String header, String value) throws WebhookRejectedException {
    try {
      return Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw new WebhookRejectedException(RejectionReason.HEADER, header + " is not a number of seconds");
    }
  }

  /** The rejection when no signature matched. */
  static WebhookRejectedException noMatch(String scheme) {
    return new WebhookRejectedException(RejectionReason.SIGNATURE,
        "no " + scheme + " signature matches the body under any configured secret");
  }
}
