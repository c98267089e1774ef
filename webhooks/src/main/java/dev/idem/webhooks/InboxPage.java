package dev.idem.webhooks;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One page of an operator's listing of the events in one state ({@link WebhookInbox#page}), in the
 * listing's order (oldest received first, then by source and event id), with the events that fail
 * their checksum marked instead of failing the read. Immutable and thread-safe.
 *
 * @param events every event the page read, in order, intact or damaged
 * @param damaged those of {@code events} whose stored type or payload no longer match their
 *     checksum (changed on disk after they were accepted), in order: what the inbox holds about
 *     each, its type as stored (which may be the changed one). Such an event is never handed to a
 *     handler; the processor makes it a dead letter when it claims it
 */
public record InboxPage(List<InboxEntry> events, List<InboxEntry> damaged) {
  /**
   * Makes the record.
   *
   * @param events every event of the page, in order; copied
   * @param damaged the damaged ones among them; copied
   * @throws NullPointerException if a list is null or holds null
   * @throws IllegalArgumentException if {@code damaged} holds an event {@code events} does not
   */
  public InboxPage {
    events = List.copyOf(Objects.requireNonNull(events, "events"));
    damaged = List.copyOf(Objects.requireNonNull(damaged, "damaged"));
    if (!events.containsAll(damaged)) {
      throw new IllegalArgumentException("every damaged event must be one of the page's events");
    }
  }

  /**
   * A page on which every event is intact.
   *
   * @param events the events, in order; copied
   * @throws NullPointerException if events is null or holds null
   */
  public InboxPage(List<InboxEntry> events) {
    this(events, List.of());
  }

  /**
   * Whether {@code event}, one of {@link #events}, failed its checksum.
   *
   * @param event an event of this page
   * @return true if it is one of {@link #damaged}
   */
  public boolean isDamaged(InboxEntry event) {
    return !damaged.isEmpty() && damaged.contains(event);
  }

  /**
   * The page's last event, intact or damaged: the {@code after} of the next page.
   *
   * @return the last of {@link #events}; empty if the page is empty
   */
  public Optional<InboxEntry> last() {
    return events.isEmpty() ? Optional.empty() : Optional.of(events.get(events.size() - 1));
  }
}
