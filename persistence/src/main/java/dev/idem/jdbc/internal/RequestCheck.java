package dev.idem.jdbc.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A checksum that binds a stored request to its fingerprint: SHA-256 over the fingerprint and the
 * request's stored JSON. The fingerprint itself cannot be recomputed by the journal (the app may
 * fingerprint with semantic headers the journal does not know), so the journal checks the bytes it
 * stored instead. A row whose request no longer matches is quarantined and never sent: a flipped
 * byte in a body would otherwise go out under the original key, and the server would replay the
 * answer to a request that is not this one.
 */
public final class RequestCheck {
  private RequestCheck() {
  }

  private static final MessageDigest PROTOTYPE = newSha256();

  public static String of(String fingerprintHex, String requestJson) {
    MessageDigest sha = sha256();
    sha.update(fingerprintHex.getBytes(StandardCharsets.US_ASCII));
    sha.update((byte) '\n');
    sha.update(requestJson.getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().formatHex(sha.digest());
  }

  static boolean matches(String stored, String fingerprintHex, String requestJson) {
    if (fingerprintHex == null || requestJson == null) {
      return false;
    }
    return MessageDigest.isEqual(stored.getBytes(StandardCharsets.US_ASCII),
        of(fingerprintHex, requestJson).getBytes(StandardCharsets.US_ASCII));
  }

  /** A fresh SHA-256 digest, cloned from a prototype: cheaper than a provider lookup per call. */
  static MessageDigest sha256() {
    try {
      return (MessageDigest) PROTOTYPE.clone();
    } catch (CloneNotSupportedException e) {
      return newSha256();
    }
  }

  private static MessageDigest newSha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }
}
