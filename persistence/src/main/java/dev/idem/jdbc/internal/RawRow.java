package dev.idem.jdbc.internal;

/**
 * One row of {@code idem_operation} exactly as stored, before decoding. Decoding happens outside the
 * store's lock, and a row that fails to decode can still be identified and quarantined.
 */
public record RawRow(
    String scope,
    String operation,
    String key,
    String reference,
    String fingerprint,
    String requestJson,
    String state,
    String owner,
    long generation,
    Long leaseExpiresAt,
    Long nextAttemptAt,
    long createdAt,
    long updatedAt,
    String attemptsJson,
    String responseJson,
    String reason,
    Long quarantinedAt,
    String quarantineReason,
    String requestCheck,
    boolean queued,
    Long outcomeDeliveredAt) {

  /** The identity as text, for messages (keys are not secrets). */
  public String idText() {
    return scope + "/" + operation + "/" + key;
  }
}
