package dev.idem.core;

import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;

/**
 * The operation ended FAILED: the server refused it permanently, or nothing was ever delivered and the attempts ran out. Nothing took effect as far as the client can know. Re-drive keeps the key.
 */
public class OperationFailedException extends OperationException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception for an operation that ended FAILED during this execution.
   *
   * @param message why, free of secrets and request bodies
   * @param cause the last failure, or null
   * @param operationId the operation
   * @param attempts its attempt history
   * @param lastResponse the last response, or null
   */
  public OperationFailedException(String message, Throwable cause, OperationId operationId, List<AttemptRecord> attempts,
      ResponseSnapshot lastResponse) {
    this(message, cause, operationId, attempts, lastResponse, false);
  }

  /**
   * Creates the exception for an operation that ended FAILED, saying whether this execution found
   * it already FAILED in the journal.
   *
   * @param message why, free of secrets and request bodies
   * @param cause the last failure, or null
   * @param operationId the operation
   * @param attempts its attempt history
   * @param lastResponse the last response, or null
   * @param fromJournal true if this execution sent nothing because the journal already held the
   *     operation as FAILED
   */
  public OperationFailedException(String message, Throwable cause, OperationId operationId, List<AttemptRecord> attempts,
      ResponseSnapshot lastResponse, boolean fromJournal) {
    super(message, cause, operationId, OperationState.FAILED, attempts, lastResponse, fromJournal);
  }
}
