package dev.idem.server;

import java.time.Duration;

/**
 * Hears what the guard decides, for metrics and logs (seed 000's operational evidence: key
 * conflicts, payload mismatches, takeovers, replays). Every method has an empty default.
 *
 * <p>Calls come from request threads at the same time, so implementations must be thread-safe and
 * quick; an exception thrown here is logged and ignored. A listener hears the route (method and raw
 * path, such as {@code POST /orders/42/refunds}), never a key, a caller or request data. Raw paths
 * may hold ids: do not use the route as a metric tag unless your routes are fixed.
 */
public interface GuardListener {
  /**
   * A repeat got the stored result.
   *
   * @param route the method and raw path
   */
  default void replayed(String route) {}

  /**
   * A repeat found the key in flight and was answered 409 (after any wait).
   *
   * @param route the method and raw path
   */
  default void conflict(String route) {}

  /**
   * A repeat found the key in flight and waited for the first request.
   *
   * @param route the method and raw path
   * @param waited how long it waited, on the guard's clock
   * @param served true if the wait ended with the result (or a claim of its own), false if with 409
   */
  default void waited(String route, Duration waited, boolean served) {}

  /**
   * A key came back with another payload.
   *
   * @param route the method and raw path
   */
  default void mismatch(String route) {}

  /**
   * A claim took over an in-flight claim whose lease had expired: its owner died or stalled.
   *
   * @param route the method and raw path
   */
  default void takeover(String route) {}

  /**
   * At start, claims left in flight by an earlier run of this instance were found dead and made
   * available at once (see {@link IdempotencyGuard.Builder#instanceId}).
   *
   * @param claims how many
   */
  default void recovered(int claims) {}

  /**
   * A purge ended: the guard's own job at its interval, or {@link IdempotencyGuard#purgeExpired()}.
   *
   * @param records how many records past retention it deleted
   */
  default void purged(int records) {}

  /**
   * The guard's background purge failed; records past retention stay until one succeeds (see
   * {@link IdempotencyGuard#lastPurgeFailure()}).
   *
   * @param failure what it failed with
   */
  default void purgeFailed(Throwable failure) {}

  /** A listener that hears nothing. */
  GuardListener NONE = new GuardListener() {};
}
