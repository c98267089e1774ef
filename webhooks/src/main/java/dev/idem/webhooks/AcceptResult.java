package dev.idem.webhooks;

/** What the inbox did with a verified delivery. Each is answered 2xx. */
public enum AcceptResult {
  /** Stored durably as a new event; it will be processed. */
  ACCEPTED,
  /** The event id was already in the inbox (a provider's retry): nothing was stored. */
  DUPLICATE,
  /** The very signature of an accepted delivery came again (a replay): nothing was stored. */
  REPLAY
}
