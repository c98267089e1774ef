package dev.idem.core.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * Proof of ownership of an IN_FLIGHT operation: the owner, the fencing generation (bumped on every
 * claim) and when the lease expires. Every journal write on an IN_FLIGHT operation carries the
 * lease; a write from a stale generation changes nothing and fails with {@link StaleOwnerException}.
 *
 * @param owner the claiming process or executor
 * @param generation the fencing generation
 * @param expiresAt after this instant another owner may take the operation over
 */
public record Lease(String owner, long generation, Instant expiresAt) {
  /**
   * Validates the components.
   *
   * @param owner the claiming process or executor
   * @param generation the fencing generation
   * @param expiresAt after this instant another owner may take the operation over
   * @throws NullPointerException if {@code owner} or {@code expiresAt} is null
   */
  public Lease {
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(expiresAt, "expiresAt");
  }
}
