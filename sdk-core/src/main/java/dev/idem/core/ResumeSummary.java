package dev.idem.core;

/**
 * What one {@link IdempotentExecutor#resumePending} pass did.
 *
 * @param examined due operations looked at
 * @param succeeded resumed and SUCCEEDED
 * @param failed resumed and FAILED
 * @param uncertain resumed and UNCERTAIN, or expired past the server's key retention
 * @param stillPending left PENDING (owned elsewhere, interrupted, or scheduled again)
 * @param expired of {@code uncertain}, how many were not sent because they outlived the key retention
 * @param unhandled skipped because no handler is registered for their operation name
 */
public record ResumeSummary(int examined, int succeeded, int failed, int uncertain, int stillPending, int expired,
    int unhandled) {}
