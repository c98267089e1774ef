package dev.idem.server.internal;

import dev.idem.server.spi.Admission;

/**
 * Whether the guard's answer to a request came from its store, so that an adapter's store-outage
 * log may say requests get through again. Answers the guard gives without the store (a request
 * without a key, unguarded or refused with 400; a malformed key; a body over the cap; an identity
 * no store keeps) say nothing about the store: counted as a success during an outage, each ordinary
 * GET would report a recovery that did not happen and start the log over with a stack trace.
 */
public final class StoreReached {
  private StoreReached() {}

  /**
   * @param admission what {@code IdempotencyGuard.admit} returned
   * @return true for a claim, a replay, a reused key or a key in flight: the store answered
   */
  public static boolean by(Admission admission) {
    if (admission instanceof Admission.Proceed) {
      return true;
    }
    if (admission instanceof Admission.Respond r) {
      return switch (r.reason()) {
        case REPLAY, IN_FLIGHT, KEY_REUSED -> true;
        case KEY_MISSING, KEY_MALFORMED, BODY_TOO_LARGE, IDENTITY_UNSTORABLE -> false;
      };
    }
    return false;
  }
}
