package dev.idem.webhooks;

/**
 * Business logic for one event type. It runs on a processor's worker thread, after the sender was
 * answered.
 *
 * <p>What a handler can rely on:
 * <ul>
 *   <li>only verified events reach it, each (source, event id) at most once at a time across every
 *       processor on the inbox (a lease, renewed while it runs: a run may take longer than the
 *       lease, though a handler that never returns holds its event, and one of the processor's
 *       workers, until the processor closes);</li>
 *   <li>returning normally marks the event DONE, and a DONE event never runs again, whatever the
 *       sender redelivers;</li>
 *   <li>throwing schedules a retry or, for a permanent failure, a dead letter;</li>
 *   <li>no order: events run in roughly the order they became due, several at once, and a retried
 *       event runs after later ones. Use the object's state from the sender's API (or a version in
 *       it), never arrival order;</li>
 *   <li>at least once, not exactly once: if the process dies while the handler runs, or after it
 *       returned but before DONE was committed, the handler runs again after the restart with the
 *       same event id. Key side effects with {@link WebhookEvent#eventId()} (for example as the
 *       idempotency key of the call it makes) so that a second run changes nothing.</li>
 * </ul>
 */
@FunctionalInterface
public interface WebhookHandler {
  /**
   * Handles one event.
   *
   * @param event the event
   * @throws Exception to fail this attempt; {@link PermanentWebhookException} (or whatever the
   *     processor's classifier calls permanent) makes it a dead letter at once
   */
  void handle(WebhookEvent event) throws Exception;
}
