package dev.idem.core;

/**
 * One key was used for two different requests. Thrown before sending when the journal already
 * holds the key with another fingerprint, and after a server gave its "key reused" answer (422 by
 * default; see {@link ProtocolStatuses}), on that execution and on every later one of the same
 * operation, which finds the refusal in the journal and sends nothing. Never retried.
 */
public class IdempotencyKeyReusedException extends IdempotencyException {
  private static final long serialVersionUID = 1L;

  private final transient OperationId operationId;
  /** True if the server detected the reuse; false if Idem refused before sending. */
  private final boolean detectedByServer;

  /**
   * Creates the exception for an operation whose key was reused with another payload.
   *
   * @param operationId the operation whose key was reused
   * @param detectedByServer false when refused locally before sending, true after the server's
   *     "key reused" answer
   * @param message details, free of request data
   */
  public IdempotencyKeyReusedException(OperationId operationId, boolean detectedByServer, String message) {
    super(message, null);
    this.operationId = operationId;
    this.detectedByServer = detectedByServer;
  }

  /**
   * The operation whose key was reused.
   *
   * @return the operation's identity; null only after deserialization, since it is not serialized
   */
  public OperationId operationId() {
    return operationId;
  }

  /**
   * True if the server detected it (now or on an earlier execution); false if Idem refused before
   * sending.
   *
   * @return whether the reuse was detected by the server
   */
  public boolean detectedByServer() {
    return detectedByServer;
  }
}
