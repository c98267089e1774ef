package dev.idem.webhooks;

/**
 * Why a delivery was not accepted. Every rejection has exactly one category, and metrics are
 * tagged with it ({@link #tag()}), never with anything taken from the request.
 */
public enum RejectionReason {
  /** A required header is missing or unparseable (no signature, no id, no timestamp). */
  HEADER("header"),
  /** No signature matches the raw body under any configured secret. */
  SIGNATURE("signature"),
  /** The signed timestamp is outside the tolerance window (too old or too far in the future). */
  TIMESTAMP("timestamp"),
  /**
   * The very signature of an accepted delivery came again: a replay. It is answered like a
   * duplicate (2xx) so that a sender that lost our answer stops, but nothing is stored or processed.
   */
  REPLAY("replay"),
  /** The body is longer than the source's cap. */
  TOO_LARGE("too-large"),
  /**
   * A validly signed delivery reuses the id of an accepted event with another payload or type
   * ({@link AcceptResult#CONFLICT}). Logged at WARN (source and event id) and counted as this
   * rejection, so that it is never dropped unseen; nothing is stored and the accepted event, the
   * one processed, is unchanged. Answered 2xx ({@code {"status":"duplicate","reason":"conflict"}}):
   * a sender retries a non-2xx for days, and may disable the endpoint, while no retry could change
   * the answer, and some senders render fields of an event again on each delivery.
   */
  CONFLICT("conflict");

  private final String tag;

  RejectionReason(String tag) {
    this.tag = tag;
  }

  /**
   * The lower-case name used in metrics and response bodies.
   *
   * @return for example {@code "too-large"}
   */
  public String tag() {
    return tag;
  }
}
