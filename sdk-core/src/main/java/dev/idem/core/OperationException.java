package dev.idem.core;

import java.util.List;
import java.util.Optional;

/**
 * An execution ended without a success. It carries what an app needs to act: the identity (with
 * the key), the state the operation is in, its attempt history and the last response, if any.
 */
public abstract class OperationException extends IdempotencyException {
  private static final long serialVersionUID = 1L;

  private final transient OperationId operationId;
  private final OperationState state;
  private final transient List<AttemptRecord> attempts;
  private final transient ResponseSnapshot lastResponse;

  protected OperationException(String message, Throwable cause, OperationId operationId, OperationState state,
      List<AttemptRecord> attempts, ResponseSnapshot lastResponse) {
    super(message, cause);
    this.operationId = operationId;
    this.state = state;
    this.attempts = List.copyOf(attempts);
    this.lastResponse = lastResponse;
  }

  /** The operation's identity; its key is the one to keep using. */
  public OperationId operationId() {
    return operationId;
  }

  /** The key, for convenience. */
  public IdempotencyKey key() {
    return operationId.key();
  }

  /** The state the operation is in now. */
  public OperationState state() {
    return state;
  }

  /** Every attempt recorded for the operation, oldest first. */
  public List<AttemptRecord> attempts() {
    return attempts;
  }

  /** The last response received, if any attempt got one. */
  public Optional<ResponseSnapshot> lastResponse() {
    return Optional.ofNullable(lastResponse);
  }
}
