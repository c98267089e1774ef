package dev.idem.core;

/** How one attempt ended, as far as retrying is concerned. */
public enum Classification {
  /** The server said the operation succeeded (2xx). */
  SUCCESS,
  /** Nothing reached the server (connect refused, DNS, TLS handshake): retry freely. */
  SAFE,
  /**
   * Something may have reached the server and taken effect (read timeout, reset after the
   * request was written, 409 in flight, and in the default table 500, 502, 504 and any other 5xx
   * but 501, 503 and 505: a 500 thrown after the commit, a gateway's 502 or 504 for a backend that
   * acted). Retried only because the request is keyed; if the operation gives up, it ends
   * UNCERTAIN, never FAILED.
   */
  AMBIGUOUS,
  /**
   * A status that asks to try again later and says the request was not processed: in the default
   * table ({@link Classifier#defaults()}) 408, 425, 429 and 503. Retried; an operation that gives
   * up after such failures alone ends FAILED. A classifier should report TRANSIENT only for an
   * answer that proves nothing was done; one that retries a response which may follow the effect
   * (500, 502, 504, another 5xx) must report it AMBIGUOUS, or giving up would end FAILED an
   * operation whose effect may exist.
   */
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
