package dev.idem.server;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of one route, overriding the guard's defaults.
 *
 * @param keyRequired whether a request without a key gets 400 (true) or runs unguarded (false)
 * @param retention how long a completed result is kept and replayed; after it the key is new again
 */
public record RoutePolicy(boolean keyRequired, Duration retention) {
  /**
   * Makes the record.
   *
   * @param keyRequired whether a request without a key gets 400 (true) or runs unguarded (false)
   * @param retention how long a completed result is kept and replayed; after it the key is new again
   * @throws NullPointerException if retention is null
   * @throws IllegalArgumentException if retention is not positive
   */
  public RoutePolicy {
    Objects.requireNonNull(retention, "a route's retention is null; give a positive Duration, such as"
        + " Duration.ofHours(24) (the guard's default)");
    if (retention.isZero() || retention.isNegative()) {
      throw new IllegalArgumentException("retention must be positive: " + retention);
    }
  }
}
