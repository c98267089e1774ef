package dev.idem.webhooks.internal;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;

/** Digests, encodings, and the one constant-time comparison everything uses. */
public final class Hmac {
  private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is not available", e);
    }
  });

  private Hmac() {}

  /** Constant-time in the content of the arrays (their lengths are public anyway). */
  public static boolean equal(byte[] a, byte[] b) {
    return a != null && b != null && MessageDigest.isEqual(a, b);
  }

  /** Lower-case hex decoding; null if {@code hex} is not hex of whole bytes. */
  public static byte[] fromHex(String hex) {
    if (hex == null || (hex.length() & 1) != 0) {
      return null;
    }
    byte[] out = new byte[hex.length() / 2];
    for (int i = 0; i < out.length; i++) {
      int hi = Character.digit(hex.charAt(2 * i), 16);
      int lo = Character.digit(hex.charAt(2 * i + 1), 16);
      if (hi < 0 || lo < 0) {
        return null;
      }
      out[i] = (byte) ((hi << 4) | lo);
    }
    return out;
  }

  /** Lower-case hex. */
  public static String toHex(byte[] bytes) {
    StringBuilder sb = new StringBuilder(bytes.length * 2);
    for (byte b : bytes) {
      sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
    }
    return sb.toString();
  }

  /** Standard base64 decoding; null if {@code b64} is not base64. */
  public static byte[] fromBase64(String b64) {
    try {
      return java.util.Base64.getDecoder().decode(b64);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /**
   * SHA-256 of the concatenation of {@code parts}, on a digest kept per thread: looking one up per
   * call cost more than digesting a small delivery.
   */
  public static byte[] sha256(byte[]... parts) {
    MessageDigest md = SHA256.get();
    for (byte[] p : parts) {
      md.update(p);
    }
    return md.digest();
  }
}
