package dev.idem.core;

import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;

/**
 * The operation is still PENDING and will be sent again with the same key: the caller was interrupted or cancelled, another owner holds it, or no retry may be sent now. Look it up again later, or resume pending operations.
 */
public class OperationPendingException extends OperationException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception for an operation left PENDING, to be sent again with the same key.
   *
   * @param message why, free of secrets and request bodies
   * @param cause the last failure, or null
   * @param operationId the operation
   * @param attempts its attempt history
   * @param lastResponse the last response, or null
   */
  public OperationPendingException(String message, Throwable cause, OperationId operationId, List<AttemptRecord> attempts,
      ResponseSnapshot lastResponse) {
    super(message, cause, operationId, OperationState.PENDING, attempts, lastResponse, false);
  }
}
