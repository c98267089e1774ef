package dev.idem.server;

/** How the guard fingerprints a request body to detect a key reused with another payload. */
public enum FingerprintMode {
  /**
   * The default, the same as Idem's client: JSON bodies (a media type ending in {@code json}) in
   * RFC 8785 canonical form, so key order and number spelling do not count as another payload;
   * other bodies, and JSON that does not parse, by their raw bytes.
   */
  CANONICAL_JSON,
  /** Every body by its raw bytes, as sent: reordered JSON is another payload. */
  RAW_BYTES
}
