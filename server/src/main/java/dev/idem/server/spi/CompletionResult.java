package dev.idem.server.spi;

import dev.idem.server.IdempotencyGuard;

/** What {@link IdempotencyGuard#complete} did with a handler's response. */
public enum CompletionResult {
  /** The response is now the operation's stored result; send it. */
  STORED,
  /** The storage policy keeps no result for this status (a 5xx by default); the claim was released. */
  RELEASED,
  /**
   * The claim is no longer this handler's: another request took the operation over (after its
   * lease ran out), or it was purged or ended otherwise. Nothing was stored, and the response must not be published; send
   * {@link IdempotencyGuard#refusedResponse()} instead.
   */
  REFUSED
}
