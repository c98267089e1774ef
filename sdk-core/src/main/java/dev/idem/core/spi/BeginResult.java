package dev.idem.core.spi;

import dev.idem.core.OperationRecord;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link Journal#begin} (or {@link Journal#beginAndClaim}) found: the record, whether this
 * call created it, and the lease if the call also claimed it.
 *
 * @param record the record, new or existing; IN_FLIGHT under {@code lease} if the call claimed it
 * @param created true if this call created it; false if the identity was already journaled with
 *     the same fingerprint
 * @param lease the lease of the claim {@link Journal#beginAndClaim} made on the operation it
 *     created; null from {@link Journal#begin}, for an existing operation, or if the claim found
 *     the operation held by someone else
 */
public record BeginResult(OperationRecord record, boolean created, Lease lease) {
  /**
   * Validates the components.
   *
   * @param record the record, new or existing
   * @param created true if this call created it
   * @param lease the lease of the claim made with the begin, or null
   * @throws NullPointerException if {@code record} is null
   * @throws IllegalArgumentException if there is a lease on an operation this call did not create
   */
  public BeginResult {
    Objects.requireNonNull(record, "record");
    if (lease != null && !created) {
      throw new IllegalArgumentException("only the begin that created an operation claims it with the begin");
    }
  }

  /**
   * What a plain {@link Journal#begin} returns: nothing claimed.
   *
   * @param record the record, new or existing
   * @param created true if this call created it
   * @throws NullPointerException if {@code record} is null
   */
  public BeginResult(OperationRecord record, boolean created) {
    this(record, created, null);
  }

  /**
   * The lease of the claim made with the begin.
   *
   * @return the lease, or empty if the call claimed nothing
   */
  public Optional<Lease> claimed() {
    return Optional.ofNullable(lease);
  }
}
