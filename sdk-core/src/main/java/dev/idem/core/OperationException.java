package dev.idem.core;

import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;
import java.util.Optional;

/**
 * An execution ended without a success. It carries what an app needs to act: the identity (with
 * the key), the state the operation is in, its attempt history and the last response, if any.
 */
public abstract class OperationException extends IdempotencyException {
  private static final long serialVersionUID = 1L;

  private final transient OperationId operationId;
  /** The state the operation was in when the exception was made. */
  private final OperationState state;
  private final transient List<AttemptRecord> attempts;
  private final transient ResponseSnapshot lastResponse;
  /** True if the journal already held the operation's ending and nothing was sent. */
  private final boolean fromJournal;

  /**
   * Creates the exception.
   *
   * @param message why, free of secrets and request bodies
   * @param cause the last failure, or null
   * @param operationId the operation
   * @param state the state the operation is in
   * @param attempts its attempt history, oldest first; copied
   * @param lastResponse the last response, or null
   * @param fromJournal true if this execution sent nothing because the journal already held the
   *     operation in {@code state} (an earlier execution's ending)
   * @throws NullPointerException if {@code attempts} is null or holds null
   */
  protected OperationException(String message, Throwable cause, OperationId operationId, OperationState state,
      List<AttemptRecord> attempts, ResponseSnapshot lastResponse, boolean fromJournal) {
    super(message, cause);
    this.operationId = operationId;
    this.state = state;
    this.attempts = List.copyOf(attempts);
    this.lastResponse = lastResponse;
    this.fromJournal = fromJournal;
  }

  /**
   * The operation's identity; its key is the one to keep using.
   *
   * @return the identity; null only after deserialization, since it is not serialized
   */
  public OperationId operationId() {
    return operationId;
  }

  /**
   * The key, for convenience.
   *
   * @return the operation's idempotency key
   */
  public IdempotencyKey key() {
    return operationId.key();
  }

  /**
   * The state the operation is in now.
   *
   * @return the state: FAILED, UNCERTAIN or PENDING, depending on the subclass
   */
  public OperationState state() {
    return state;
  }

  /**
   * Every attempt recorded for the operation, oldest first.
   *
   * @return an immutable list of the attempts, oldest first; empty if none was made
   */
  public List<AttemptRecord> attempts() {
    return attempts;
  }

  /**
   * The last response received, if any attempt got one.
   *
   * @return the last response, or empty
   */
  public Optional<ResponseSnapshot> lastResponse() {
    return Optional.ofNullable(lastResponse);
  }

  /**
   * Whether this execution sent nothing because the journal already held the operation's ending.
   *
   * @return true if the journal already held the operation as FAILED or UNCERTAIN (an earlier
   *     execution's ending, handed over again); false if it ended so now, and always false for
   *     PENDING
   */
  public boolean fromJournal() {
    return fromJournal;
  }
}
