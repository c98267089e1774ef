package dev.idem.core;

/** How one attempt ended, as far as retrying is concerned. */
public enum Classification {
  /** The server said the operation succeeded (2xx). */
  SUCCESS,
  /** Nothing reached the server (connect refused, DNS, TLS handshake): retry freely. */
  SAFE,
  /**
   * Something may have reached the server and taken effect (read timeout, reset after the
   * request was written, 409 in flight). Retried only because the request is keyed; if the
   * operation gives up, it ends UNCERTAIN, never FAILED.
   */
  AMBIGUOUS,
  /** A status that asks to try again later: 408, 425, 429, 500, 502, 503, 504. */
  TRANSIENT,
  /** Retrying cannot help: other 4xx, 501, 505, or a classifier's explicit say-so. */
  PERMANENT;

  /**
   * True for the classes that allow another attempt.
   *
   * @return true for SAFE, AMBIGUOUS and TRANSIENT; false for SUCCESS and PERMANENT
   */
  public boolean isRetryable() {
    return this == SAFE || this == AMBIGUOUS || this == TRANSIENT;
  }
}
