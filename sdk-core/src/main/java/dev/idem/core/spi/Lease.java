package dev.idem.core.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * Proof of ownership of an IN_FLIGHT operation: the owner, the fencing generation (bumped on every
 * claim) and when the lease expires. Every journal write on an IN_FLIGHT operation carries the
 * lease; a write from a stale generation changes nothing and fails with {@link StaleOwnerException}.
 *
 * <p>{@code takeover} is a fact the journal reports, not a rule it applies: whether the claim found
 * the operation IN_FLIGHT (an expired lease, or the claimant's own from an earlier incarnation).
 * The holder of the previous generation may then have sent its attempt; the executor, not the
 * journal, records that attempt as AMBIGUOUS ({@link Takeover}).
 *
 * @param owner the claiming process or executor
 * @param generation the fencing generation
 * @param expiresAt after this instant another owner may take the operation over
 * @param takeover true if the claim took the operation over from an IN_FLIGHT holder, false if it
 *     claimed a PENDING operation
 */
public record Lease(String owner, long generation, Instant expiresAt, boolean takeover) {
  /**
   * Validates the components.
   *
   * @param owner the claiming process or executor
   * @param generation the fencing generation
   * @param expiresAt after this instant another owner may take the operation over
   * @param takeover true if the claim took the operation over from an IN_FLIGHT holder
   * @throws NullPointerException if {@code owner} or {@code expiresAt} is null
   */
  public Lease {
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(expiresAt, "expiresAt");
  }
}
