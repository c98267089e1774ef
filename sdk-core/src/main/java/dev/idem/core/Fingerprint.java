package dev.idem.core;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A SHA-256 digest, in lower-case hex, that identifies the intent of a request: what must be the
 * same on every attempt that uses one key. See {@link Fingerprinter} for what goes into it.
 *
 * @param hex 64 lower-case hex characters
 */
public record Fingerprint(String hex) {
  private static final Pattern HEX = Pattern.compile("[0-9a-f]{64}");

  /** @throws IllegalArgumentException unless {@code hex} is 64 lower-case hex characters */
  public Fingerprint {
    Objects.requireNonNull(hex, "hex");
    if (!HEX.matcher(hex).matches()) {
      throw new IllegalArgumentException("a fingerprint is 64 lower-case hex characters");
    }
  }

  @Override
  public String toString() {
    return hex;
  }
}
