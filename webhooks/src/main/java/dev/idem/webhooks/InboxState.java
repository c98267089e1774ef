package dev.idem.webhooks;

/**
 * Where an event is in the inbox.
 * <pre>
 * PENDING --claim--> PROCESSING --handler returned--> DONE
 *    ^                   |--------permanent failure or attempts spent--> DEAD --redrive--> PENDING
 *    +--retry scheduled--+   (also when a lease expires: the owner died)
 * </pre>
 */
public enum InboxState {
  /** Accepted and waiting for its (next) attempt. */
  PENDING,
  /** A processor holds its lease and runs its handler. */
  PROCESSING,
  /** Its handler returned normally. Terminal. */
  DONE,
  /** Dead letter: a permanent failure, or the retry policy gave up. Leaves only by redrive. */
  DEAD
}
