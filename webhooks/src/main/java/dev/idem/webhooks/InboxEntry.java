package dev.idem.webhooks;

import java.time.Instant;
import java.util.Optional;

/**
 * What the inbox holds about one event (without its body).
 *
 * @param source the source's name
 * @param eventId the provider's event id
 * @param eventType the event type; empty if none
 * @param state where it is
 * @param attempts attempts since it was accepted or last re-driven
 * @param runs handler runs ever started, including interrupted ones
 * @param receivedAt when it was accepted
 * @param nextAttemptAt when a PENDING event is due
 * @param finishedAt when it became DONE or DEAD; empty otherwise
 * @param lastError the last handler failure (exception class and message), if any
 */
public record InboxEntry(String source, String eventId, String eventType, InboxState state, int attempts, int runs,
    Instant receivedAt, Instant nextAttemptAt, Optional<Instant> finishedAt, Optional<String> lastError) {
}
