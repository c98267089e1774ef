package dev.idem.server;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of one route, overriding the guard's defaults.
 *
 * @param keyRequired whether a request without a key gets 400 (true) or runs unguarded (false)
 * @param retention how long a completed result is kept and replayed; after it the key is new again
 * @param storagePolicy which of the route's results are stored; null for the guard's
 */
public record RoutePolicy(boolean keyRequired, Duration retention, StoragePolicy storagePolicy) {
  /**
   * Makes the record.
   *
   * @param keyRequired whether a request without a key gets 400 (true) or runs unguarded (false)
   * @param retention how long a completed result is kept and replayed; after it the key is new again
   * @param storagePolicy which of the route's results are stored; null for the guard's
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

  /**
   * A policy that stores results as the guard does.
   *
   * @param keyRequired whether a request without a key gets 400 (true) or runs unguarded (false)
   * @param retention how long a completed result is kept and replayed; after it the key is new again
   * @throws NullPointerException if retention is null
   * @throws IllegalArgumentException if retention is not positive
   */
  public RoutePolicy(boolean keyRequired, Duration retention) {
    this(keyRequired, retention, null);
  }

  /**
   * This policy with its own storage policy.
   *
   * @param policy which of the route's results are stored
   * @return a copy with {@code policy}
   */
  public RoutePolicy storing(StoragePolicy policy) {
    return new RoutePolicy(keyRequired, retention, Objects.requireNonNull(policy, "policy"));
  }
}
