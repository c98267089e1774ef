package dev.idem.core.fingerprint;

import java.util.Objects;

/**
 * A SHA-256 digest, in lower-case hex, that identifies the intent of a request: what must be the
 * same on every attempt that uses one key. See {@link Fingerprinter} for what goes into it.
 *
 * @param hex 64 lower-case hex characters
 */
public record Fingerprint(String hex) {
  private static final int LENGTH = 64;

  /**
   * Validates the digest.
   *
   * @param hex 64 lower-case hex characters
   * @throws IllegalArgumentException unless {@code hex} is 64 lower-case hex characters
   * @throws NullPointerException if {@code hex} is null
   */
  public Fingerprint {
    Objects.requireNonNull(hex, "hex");
    if (!isLowerHex(hex)) {
      throw new IllegalArgumentException("a fingerprint is 64 lower-case hex characters");
    }
  }

  // A loop, not a regex: every record a journal reads builds one, and the regex was several
  // percent of a journal write's CPU.
  private static boolean isLowerHex(String s) {
    if (s.length() != LENGTH) {
      return false;
    }
    for (int i = 0; i < LENGTH; i++) {
      char c = s.charAt(i);
      if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
        return false;
      }
    }
    return true;
  }

  @Override
  public String toString() {
    return hex;
  }
}
