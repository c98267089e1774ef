package dev.idem.testkit.internal;

import dev.idem.core.Fingerprint;
import dev.idem.testkit.Reply;

/**
 * What the server remembers about one {@link OperationIdentity}: it is either still being processed
 * or completed with a stored reply. There is no failed state on purpose: a request whose handler
 * did not finish leaves no record, so a retry runs it again (as the IETF draft describes for
 * server errors).
 */
public sealed interface IdempotencyRecord {
  /** The fingerprint of the request that created this record. */
  Fingerprint fingerprint();

  /**
   * A request holds the claim and has not finished. The claim id gives each claim its own identity,
   * so a conditional replace or remove can only ever act on the claim it was given.
   *
   * @param fingerprint the claiming request's fingerprint
   * @param claimId unique per claim within one store
   */
  record Processing(Fingerprint fingerprint, long claimId) implements IdempotencyRecord {}

  /**
   * The operation finished; every later request with the same identity and fingerprint gets this
   * reply again.
   *
   * @param fingerprint the fingerprint of the request that produced the reply
   * @param reply the stored reply
   */
  record Completed(Fingerprint fingerprint, Reply reply) implements IdempotencyRecord {}
}
