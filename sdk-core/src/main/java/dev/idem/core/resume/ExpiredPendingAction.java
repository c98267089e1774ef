package dev.idem.core.resume;

import dev.idem.core.IdempotentExecutor;

/**
 * What queued delivery ({@link IdempotentExecutor#resumePending}, {@code resume},
 * {@code resumeAsync}, an {@code OutboxDispatcher}) does with an operation that reaches its age
 * limit, {@link IdempotentExecutor.Builder#maxPendingAge} after its creation. The age limit stays
 * below the server's key retention ({@link IdempotentExecutor.Builder#serverKeyRetention}): after
 * that the server may have forgotten the key, so a re-send of an operation that may already have
 * taken effect could take effect a second time.
 */
public enum ExpiredPendingAction {
  /**
   * Do not send; end the operation with a reason: UNCERTAIN if an attempt may have reached the
   * server (an ambiguous attempt, any answer), for reconciliation or an explicit re-drive; FAILED if
   * none can have (it was never sent, or every attempt was refused before a byte was written). The
   * default.
   */
  MARK_UNCERTAIN,
  /**
   * No age limit: send it anyway, however old, and keep an operation whose target is unreachable
   * PENDING for as long as it takes. Only for servers that keep keys longer than the app waits, or
   * operations that are idempotent by nature.
   */
  RESEND
}
