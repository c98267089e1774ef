package dev.idem.webhooks.internal;

import dev.idem.webhooks.RejectionReason;
import dev.idem.webhooks.WebhookRejectedException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** One signature scheme. Implementations are immutable and thread-safe. */
public interface Verifier {
  /** The scheme's name, such as {@code "stripe"}. */
  String name();

  /**
   * The HMAC key for a secret as the provider shows it; by default HMAC-SHA256 keyed with its UTF-8
   * bytes (Stripe, GitHub). Decoded once, when the source is built.
   *
   * @throws IllegalArgumentException if the secret is malformed for this scheme
   */
  default MacKey key(String secret) {
    return new MacKey("HmacSHA256", secret.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Whether the MAC covers both the timestamp and the event id (in a header, or in the signed body),
   * so that the remembered signature may be ordered by its timestamp ({@link SignatureDigest}).
   * False by default.
   */
  default boolean signsTimestampAndId() {
    return false;
  }

  /**
   * Whether the MAC covers the event id (in the signed content, or read from the signed body), so
   * that a replay cannot carry another id: the inbox then refuses it by its id, and what is
   * remembered of its signature need not hold under every secret ({@link #match}). False by
   * default, the safe answer for a scheme that does not say.
   */
  default boolean signsEventId() {
    return false;
  }

  /**
   * Checks the signature over the raw body, then the timestamp window.
   *
   * @param keys the keys of every configured secret, newest first
   * @param nowSeconds the receiver's clock
   * @param toleranceSeconds how far a signed timestamp may be from now, either way
   */
  SchemeResult verify(Headers headers, byte[] body, List<MacKey> keys, long nowSeconds, long toleranceSeconds)
      throws WebhookRejectedException;

  /**
   * The largest signed time, either side of the epoch, in seconds, that is checked against the
   * window: the inbox stores it in epoch milliseconds, and {@code Instant.ofEpochSecond} takes it
   * (a smaller range than Instant's). Within it, {@code now - timestamp} cannot overflow.
   */
  long MAX_SECONDS = Long.MAX_VALUE / 1000;

  /**
   * Rejects a timestamp more than {@code tolerance} seconds away from now, either way, or too far
   * from the epoch to be a time at all. The bound comes first: a signed {@code Long.MIN_VALUE + now}
   * made both subtractions overflow to a negative number, passed the window and then made
   * {@code Instant.ofEpochSecond} throw out of the receiver instead of answering 400.
   */
  static void checkWindow(long timestamp, long now, long tolerance) throws WebhookRejectedException {
    if (timestamp > MAX_SECONDS || timestamp < -MAX_SECONDS) {
      throw new WebhookRejectedException(RejectionReason.TIMESTAMP,
          "signed " + timestamp + " s from the epoch, not a time the window can be checked against");
    }
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

  /**
   * Checks that one of the {@code given} signatures is the MAC of the signed content under one of
   * the keys, and returns what the inbox remembers of it to recognise a replay. Several signatures
   * are allowed, as a sender signs with old and new secrets while rotating. Every given one is
   * compared, in constant time, so the time taken does not tell which matched.
   *
   * <p>Without {@code everyKey}, or with one key, the answer is the MAC under the first key (newest
   * first) that a given signature matches, as it always was. With {@code everyKey} and several
   * keys, it is the MAC under every key, the first key's first: while rotating, one signed content
   * has a valid MAC under each secret, and a scheme that does not sign its event id recognises a
   * replay under a new id only by its signature, which the replay may carry under either secret.
   * The first is stored, whichever signature the delivery carried, so that two deliveries of the
   * same content share it (the inbox's unique index refuses the second even when both arrive at
   * once); the others are looked for among the digests stored before (inboxes written before, or
   * while only another secret was configured, hold the MAC under the one that matched).
   *
   * @param everyKey whether to return the MAC under every key ({@code !}{@link #signsEventId()})
   * @param given the signatures in the delivery, decoded; null for one that did not decode
   * @param signed the pieces of the signed content, in order
   * @return the MACs to remember, the one to store first; never empty
   * @throws WebhookRejectedException SIGNATURE if none matches under any key
   */
  static List<byte[]> match(String scheme, List<MacKey> keys, boolean everyKey, List<byte[]> given,
      byte[]... signed) throws WebhookRejectedException {
    if (everyKey && keys.size() > 1) {
      List<byte[]> macs = new ArrayList<>(keys.size());
      boolean matched = false;
      for (MacKey key : keys) {
        byte[] expected = key.mac(signed);
        for (byte[] g : given) {
          matched |= Hmac.equal(expected, g);
        }
        macs.add(expected);
      }
      if (!matched) {
        throw noMatch(scheme);
      }
      return macs;
    }
    for (MacKey key : keys) {
      byte[] expected = key.mac(signed);
      boolean matched = false;
      for (byte[] g : given) {
        matched |= Hmac.equal(expected, g);
      }
      if (matched) {
        return Collections.singletonList(expected);
      }
    }
    throw noMatch(scheme);
  }

  /** The rejection when no signature matched. */
  static WebhookRejectedException noMatch(String scheme) {
    return new WebhookRejectedException(RejectionReason.SIGNATURE,
        "no " + scheme + " signature matches the body under any configured secret");
  }
}
