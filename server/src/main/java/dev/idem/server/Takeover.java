package dev.idem.server;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.spi.StoredRecord;
import java.time.Instant;

/**
 * The rules every store applies, in one place for the in-memory store; the JDBC store states the
 * same rules in its SQL, and the shared store contract test holds them together.
 */
final class Takeover {
  private Takeover() {}

  /** Whether a new claim with {@code fingerprint} may replace {@code r} at {@code now}. */
  static boolean allowed(StoredRecord r, Fingerprint fingerprint, Instant now) {
    if (!r.expiresAt().isAfter(now) && !leaseLive(r, now)) {
      return true; // past retention: the key is new again
    }
    return switch (r.state()) {
      case RELEASED -> true;
      // A crashed owner's request is retried with the same payload; another payload is still a reuse.
      case IN_FLIGHT -> !leaseLive(r, now) && r.fingerprint().equals(fingerprint);
      case COMPLETED -> false;
    };
  }

  static boolean purgeable(StoredRecord r, Instant now) {
    return !r.expiresAt().isAfter(now) && !leaseLive(r, now);
  }

  private static boolean leaseLive(StoredRecord r, Instant now) {
    return r.state() == RecordState.IN_FLIGHT && r.leaseUntil().isAfter(now);
  }
}
