package dev.idem.webhooks.internal;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.NoSuchAlgorithmException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * One configured secret as an HMAC key, with a {@link Mac} per thread that is initialised once:
 * looking a Mac up and keying it costs more than the MAC of a small delivery, and a Mac is not
 * thread-safe. Each MAC ends with {@code doFinal}, which leaves the thread's Mac keyed and reset
 * for its next use. Thread-safe.
 */
public final class MacKey {
  private final String algorithm;
  private final SecretKeySpec key;
  private final ThreadLocal<Mac> perThread = ThreadLocal.withInitial(this::newMac);

  /**
   * @param algorithm a JCA MAC algorithm, such as {@code HmacSHA256}
   * @param key the key bytes, decoded from the secret
   * @throws IllegalArgumentException if the key is one anyone can sign with ({@link #guessable}),
   *     or the algorithm is unknown or refuses the key; the message never quotes the key
   */
  public MacKey(String algorithm, byte[] key) {
    if (guessable(key)) {
      throw new IllegalArgumentException("the secret gives an empty key (it is blank, or decodes to nothing but"
          + " whitespace or zero bytes), one anyone can sign with; set the endpoint's signing secret from the"
          + " sender's dashboard");
    }
    this.algorithm = algorithm;
    this.key = new SecretKeySpec(key, algorithm);
    try {
      // Fails at configuration rather than on the first delivery.
      Mac.getInstance(algorithm).init(this.key);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalArgumentException("unknown MAC algorithm " + algorithm, e);
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("the " + algorithm + " key is not usable: " + e.getMessage(), e);
    }
  }

  /**
   * Whether {@code key} is empty, or holds only whitespace (ASCII, or Unicode once read as UTF-8:
   * a secret variable or file holding spaces or a newline) and zero bytes. HMAC pads a short key
   * with zeros, so an all-zero key is the empty key, and whitespace is what an unset-but-defined
   * variable or an empty secret file holds: a sender anyone can impersonate.
   */
  static boolean guessable(byte[] key) {
    return new String(key, StandardCharsets.UTF_8).chars()
        .allMatch(c -> c == 0 || Character.isWhitespace(c) || Character.isSpaceChar(c));
  }

  /**
   * The MAC of the concatenation of {@code parts}, computed piece by piece so that the raw body is
   * never copied into a bigger array.
   */
  public byte[] mac(byte[]... parts) {
    Mac mac = perThread.get();
    for (byte[] p : parts) {
      mac.update(p);
    }
    return mac.doFinal();
  }

  private Mac newMac() {
    try {
      Mac mac = Mac.getInstance(algorithm);
      mac.init(key);
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC " + algorithm + " is not available", e);
    }
  }
}
