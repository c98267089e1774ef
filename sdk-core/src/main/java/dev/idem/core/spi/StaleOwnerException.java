package dev.idem.core.spi;

import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationId;

/**
 * A journal write carried a lease whose owner or generation is no longer current: another owner
 * took the operation over. The write changed nothing, and the caller must not publish its result.
 */
public class StaleOwnerException extends IdempotencyException {
  private static final long serialVersionUID = 1L;

  private final transient OperationId operationId;

  /**
   * Creates the exception for a journal write refused because its lease is no longer current.
   *
   * @param operationId the operation
   * @param lease the stale lease
   * @param current a description of the current owner and generation
   */
  public StaleOwnerException(OperationId operationId, Lease lease, String current) {
    super("stale owner for " + operationId + ": lease of " + lease.owner() + " at generation "
        + lease.generation() + " is no longer current (" + current + ")", null);
    this.operationId = operationId;
  }

  /**
   * The operation whose lease went stale.
   *
   * @return the identity; null only after deserialization, since it is not serialized
   */
  public OperationId operationId() {
    return operationId;
  }
}
