package dev.idem.webhooks.internal;

/**
 * An event's identity in the inbox, (source, event id): what a processor keeps of the events it is
 * running, so that it never claims one of them again while its run goes on.
 */
public record EventKey(String source, String eventId) {
  /** @return the key of a claimed event */
  public static EventKey of(ClaimedEvent e) {
    return new EventKey(e.source(), e.eventId());
  }
}
