package dev.idem.core;

import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;

/**
 * The operation ended UNCERTAIN: it may have taken effect, but no response said so. Idem never reports failure in that case. Reconcile (for example with a GET by the app's reference) or re-drive with the same key.
 */
public class OperationUncertainException extends OperationException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception for an operation that ended UNCERTAIN during this execution.
   *
   * @param message why, free of secrets and request bodies
   * @param cause the last failure, or null
   * @param operationId the operation
   * @param attempts its attempt history
   * @param lastResponse the last response, or null
   */
  public OperationUncertainException(String message, Throwable cause, OperationId operationId, List<AttemptRecord> attempts,
      ResponseSnapshot lastResponse) {
    this(message, cause, operationId, attempts, lastResponse, false);
  }

  /**
   * Creates the exception for an operation that ended UNCERTAIN, saying whether this execution
   * found it already UNCERTAIN in the journal.
   *
   * @param message why, free of secrets and request bodies
   * @param cause the last failure, or null
   * @param operationId the operation
   * @param attempts its attempt history
   * @param lastResponse the last response, or null
   * @param fromJournal true if this execution sent nothing because the journal already held the
   *     operation as UNCERTAIN
   */
  public OperationUncertainException(String message, Throwable cause, OperationId operationId,
      List<AttemptRecord> attempts, ResponseSnapshot lastResponse, boolean fromJournal) {
    super(message, cause, operationId, OperationState.UNCERTAIN, attempts, lastResponse, fromJournal);
  }
}
