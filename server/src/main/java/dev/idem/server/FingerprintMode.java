package dev.idem.server;

/** How the guard fingerprints a request body to detect a key reused with another payload. */
public enum FingerprintMode {
  /**
   * The default, the same as Idem's client: JSON bodies (a media type ending in {@code json}) in
   * RFC 8785 canonical form, so key order and number spelling do not count as another payload;
   * other bodies, and JSON that does not parse, by their raw bytes.
   *
   * <p>One departure from the RFC: a number that a double does not hold exactly (an id beyond
   * 2^53 such as {@code 9007199254740993}, an amount such as {@code 0.10000000000000001}) keeps
   * its exact value instead of being rounded to the double's, so that payloads an app reading a
   * {@code long} or a {@code BigDecimal} tells apart are different payloads here too (a reused key
   * is refused, not replayed). Numbers a double holds canonicalize as the RFC says, so fingerprints
   * stored before this stay valid.
   */
  CANONICAL_JSON,
  /** Every body by its raw bytes, as sent: reordered JSON is another payload. */
  RAW_BYTES
}
