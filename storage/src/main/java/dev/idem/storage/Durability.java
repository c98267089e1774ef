package dev.idem.storage;

/** How durable a write must be when the call that made it returns. */
public enum Durability {
  /**
   * Durable before the call returns (the record survives a kill -9, and with disk sync a power
   * loss). Concurrent SYNC writes share one commit (group commit).
   */
  SYNC,
  /**
   * Visible to every later call at once, but made durable with the next SYNC write or within the
   * deferred commit interval. Losing it in a crash reverts the operation to an earlier state, which
   * only ever leads to a safe, keyed replay.
   */
  DEFERRED
}
