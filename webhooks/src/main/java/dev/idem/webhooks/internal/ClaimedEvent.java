package dev.idem.webhooks.internal;

/**
 * An event a processor holds the lease of. {@code generation} fences its completion: once the lease
 * moved on (it expired and another instance claimed the event), this holder's completion changes
 * nothing. {@code payloadIntact} is false if the stored event no longer matches the checksum kept
 * with it when it was accepted ({@link EventChecksum}; true for a row from before the checksum,
 * which has none): such a type or body is not the provider's, and is never handed to a handler.
 */
public record ClaimedEvent(String source, String eventId, String eventType, byte[] body, long receivedAtMs,
    int attempts, int run, long generation, long firstAttemptAtMs, long lastDelayMs, boolean payloadIntact) {
}
