package dev.idem.server.spi;

import dev.idem.server.Claim;
import dev.idem.server.GuardResponse;
import dev.idem.server.IdempotencyGuard;
import java.util.Objects;

/** What the guard decided for one request, in {@link IdempotencyGuard#admit}. */
public sealed interface Admission {
  /**
   * The request claimed its operation: run the handler, then call
   * {@link IdempotencyGuard#complete} with its response, or {@link IdempotencyGuard#abandon} if
   * it throws. Exactly one of the two, exactly once.
   *
   * @param claim the claim to complete or abandon
   * @param body the request body the guard read, to hand to the handler
   */
  record Proceed(Claim claim, byte[] body) implements Admission {
    /**
     * Makes the record.
     *
     * @param claim the claim to complete or abandon
     * @param body the request body the guard read, to hand to the handler
     * @throws NullPointerException if an argument is null
     */
    public Proceed {
      Objects.requireNonNull(claim, "claim");
      Objects.requireNonNull(body, "body");
    }
  }

  /** The request has no key and its route does not require one: run the handler, unguarded. */
  record Unguarded() implements Admission {}

  /**
   * The guard answers without running the handler.
   *
   * @param reason why
   * @param response what to send
   */
  record Respond(Reason reason, GuardResponse response) implements Admission {
    /**
     * Makes the record.
     *
     * @param reason why
     * @param response what to send
     * @throws NullPointerException if an argument is null
     */
    public Respond {
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(response, "response");
    }
  }

  /** Why the guard answered itself. */
  enum Reason {
    /** The operation completed before: its stored result. */
    REPLAY,
    /** Another request holds the operation: 409, retry later. */
    IN_FLIGHT,
    /** The key was used with another payload: 422 by default. */
    KEY_REUSED,
    /** The route requires a key and none came: 400. */
    KEY_MISSING,
    /** The key header is malformed: 400. */
    KEY_MALFORMED,
    /** The body is over the request cap: 413, nothing claimed. */
    BODY_TOO_LARGE,
    /**
     * The operation's identity holds what no store keeps as given: a NUL (U+0000) or an unpaired
     * UTF-16 surrogate in the caller (what the adapter's caller function returned, such as a
     * tenant header) or the route. 400, nothing read, claimed or stored. PostgreSQL refuses a NUL
     * on every write, and the drivers write an unpaired surrogate as '?', so that a caller
     * {@code t} followed by a lone U+D800 would share the records of the caller {@code "t?"}; the
     * identity is refused rather than changed, and the same request is refused every time, so a
     * retry is pointless. So is a caller or route longer than
     * {@link dev.idem.server.RecordId#MAX_CALLER_BYTES} or
     * {@link dev.idem.server.RecordId#MAX_ROUTE_BYTES} bytes in UTF-8, which PostgreSQL's index of
     * the records refuses (a 503 on every retry before).
     */
    IDENTITY_UNSTORABLE
  }
}
