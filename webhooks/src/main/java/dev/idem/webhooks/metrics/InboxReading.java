package dev.idem.webhooks.metrics;

import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.WebhookInbox;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;

/**
 * One reading of the inbox that serves every gauge of {@link MicrometerWebhookMetrics} until the
 * next refresh: the queued and dead events, and when the oldest queued one was received, so that
 * its age keeps growing between readings.
 */
record InboxReading(long queued, long dead, Optional<Instant> oldestQueued) {
  static InboxReading of(WebhookInbox inbox, Instant now) {
    Map<InboxState, Long> c = inbox.counts(EnumSet.of(InboxState.PENDING, InboxState.PROCESSING, InboxState.DEAD));
    Duration waited = inbox.oldestWaiting();
    long queued = c.get(InboxState.PENDING) + c.get(InboxState.PROCESSING);
    return new InboxReading(queued, c.get(InboxState.DEAD),
        queued == 0 ? Optional.empty() : Optional.of(now.minus(waited)));
  }

  /** The oldest queued event's age at {@code now}, in seconds; zero if none was queued. */
  double oldestAgeSeconds(Instant now) {
    return oldestQueued.map(t -> Duration.between(t, now)).filter(d -> !d.isNegative()).orElse(Duration.ZERO)
        .toMillis() / 1000.0;
  }
}
