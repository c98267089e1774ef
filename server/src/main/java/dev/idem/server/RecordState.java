package dev.idem.server;

import dev.idem.server.spi.IdempotencyStore;

/** The state of one operation record in an {@link IdempotencyStore}. */
public enum RecordState {
  /** A handler holds the claim, under a lease, and has not finished. */
  IN_FLIGHT,
  /** The handler finished and its response is stored; repeats get the replay. */
  COMPLETED,
  /**
   * The handler failed (a 5xx the policy does not store, or an exception): the next request with
   * the key claims it again, whatever its payload. The row is kept rather than deleted so that
   * the generation keeps counting up and a stale handler stays fenced out.
   */
  RELEASED
}
