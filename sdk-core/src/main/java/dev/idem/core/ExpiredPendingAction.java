package dev.idem.core;

/**
 * What {@link IdempotentExecutor#resumePending} does with an operation that is still pending past
 * the server's key retention window. After that window the server may have forgotten the key, so
 * a re-send could take effect a second time.
 */
public enum ExpiredPendingAction {
  /**
   * Do not send; move it to UNCERTAIN with a reason, for reconciliation or an explicit re-drive.
   * The default.
   */
  MARK_UNCERTAIN,
  /**
   * Send it anyway. Only for servers that keep keys longer than the app waits, or operations that
   * are idempotent by nature.
   */
  RESEND
}
