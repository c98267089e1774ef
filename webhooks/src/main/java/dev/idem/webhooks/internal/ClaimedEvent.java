package dev.idem.webhooks.internal;

/**
 * An event a processor holds the lease of. {@code generation} fences its completion: once the lease
 * moved on (it expired and another instance claimed the event), this holder's completion changes
 * nothing.
 */
public record ClaimedEvent(String source, String eventId, String eventType, byte[] body, long receivedAtMs,
    int attempts, int run, long generation, long firstAttemptAtMs, long lastDelayMs) {
}
