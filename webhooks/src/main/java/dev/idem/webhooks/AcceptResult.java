package dev.idem.webhooks;

/**
 * What the inbox did with a verified delivery. Each is answered 2xx; {@link #CONFLICT} is also
 * logged at WARN and counted as a rejection (see {@link RejectionReason#CONFLICT}).
 */
public enum AcceptResult {
  /**
   * Stored durably as a new event; it will be processed. Also the resend of an event whose stored
   * payload fails its checksum (changed on disk): its payload, which matches the checksum, is stored
   * in place of the damaged one, and a dead letter for that damage is due again.
   */
  ACCEPTED,
  /**
   * The event id was already in the inbox (a provider's retry): nothing of it was stored but what
   * replay defence needs, its signed time if later than the event's (kept until it is outside the
   * window, see {@link WebhookInbox#purgeDone}) and, where the scheme does not sign the event id,
   * its signature.
   */
  DUPLICATE,
  /** The very signature of an accepted delivery came again (a replay): nothing was stored. */
  REPLAY,
  /**
   * The event id was already in the inbox with another payload (or type): not a retry, which
   * carries the same content, but a sender's bug or a forgery under a reused id. Nothing was stored
   * but what replay defence needs (as for a {@link #DUPLICATE}), and the stored event is unchanged. Told apart by the stored event's checksum; an event stored
   * before inboxes kept one is taken as a {@link #DUPLICATE}.
   */
  CONFLICT
}
