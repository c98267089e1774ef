package dev.idem.testkit.internal;

import dev.idem.testkit.Reply;

/** The outcome of trying to claim an {@link OperationIdentity} in a {@link RecordStore}. */
public sealed interface ClaimResult {
  /**
   * The caller now owns the operation and must either complete or release it.
   *
   * @param claim the record that was inserted, needed to complete or release it
   */
  record Claimed(IdempotencyRecord.Processing claim) implements ClaimResult {}

  /** Another request holds the claim and has not finished. */
  record InFlight() implements ClaimResult {}

  /** The key was already used for this operation with a different request fingerprint. */
  record Mismatch() implements ClaimResult {}

  /**
   * The operation completed earlier; replay its reply.
   *
   * @param reply the stored reply
   */
  record Replay(Reply reply) implements ClaimResult {}
}
