package dev.idem.server;

import java.time.Duration;
import java.util.Objects;

/**
 * An answer the guard gives instead of running the handler (or instead of publishing its result),
 * before it is shaped by the {@link GuardRenderer}: what happened, the status the guard suggests,
 * and a human explanation.
 *
 * @param kind what happened
 * @param status the status the guard suggests (for {@link Kind#KEY_REUSED}, the configured
 *     {@linkplain IdempotencyGuard.Builder#mismatchStatus mismatch status}); a renderer may answer
 *     another
 * @param keyHeader the name of the key header, for messages
 * @param title a short human summary
 * @param detail a human explanation of this occurrence; never holds the key or request data
 * @param retryAfter the {@code Retry-After} the guard suggests, or null for none
 */
public record Refusal(Kind kind, int status, String keyHeader, String title, String detail, Duration retryAfter) {
  /**
   * Makes the record.
   *
   * @param kind what happened
   * @param status the status the guard suggests
   * @param keyHeader the name of the key header, for messages
   * @param title a short human summary
   * @param detail a human explanation of this occurrence
   * @param retryAfter the {@code Retry-After} the guard suggests, or null for none
   * @throws NullPointerException if any argument but retryAfter is null
   */
  public Refusal {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(keyHeader, "keyHeader");
    Objects.requireNonNull(title, "title");
    Objects.requireNonNull(detail, "detail");
  }

  /** What the guard refuses, and why. */
  public enum Kind {
    /** The route requires a key and none came (400): a client bug, not worth a retry. */
    KEY_MISSING,
    /** The key header is malformed (400). */
    KEY_MALFORMED,
    /** The key was used before with another payload (422 by default): use a new key. */
    KEY_REUSED,
    /** Another request holds the operation (409): retry later to get its result. */
    IN_FLIGHT,
    /**
     * The handler ran but its claim expired before its result was stored (409): another request
     * may hold the operation now; a retry gets its result.
     */
    CLAIM_LOST,
    /** The request body is over the guard's cap (413); nothing was claimed. */
    BODY_TOO_LARGE,
    /**
     * The operation's caller or route holds a NUL or an unpaired surrogate, or is over its length
     * limit ({@link RecordId#MAX_CALLER_BYTES}, {@link RecordId#MAX_ROUTE_BYTES}), which no store
     * keeps as given (400): nothing was claimed, and the same request is refused every time.
     */
    IDENTITY_UNSTORABLE,
    /** The store failed (503); a retry is safe. */
    STORE_UNAVAILABLE,
    /**
     * A transactional handler threw (500): its transaction rolled back, nothing was done, and a
     * retry runs it again.
     */
    HANDLER_FAILED;

    /**
     * Whether the same request may succeed if it is sent again later.
     *
     * @return true for {@link #IN_FLIGHT}, {@link #CLAIM_LOST}, {@link #STORE_UNAVAILABLE} and
     *     {@link #HANDLER_FAILED}
     */
    public boolean retryable() {
      return this == IN_FLIGHT || this == CLAIM_LOST || this == STORE_UNAVAILABLE || this == HANDLER_FAILED;
    }
  }
}
