package dev.idem.server;

import dev.idem.server.spi.CompletionResult;
import java.time.Duration;

/**
 * Something the guard decided, as told to a {@link GuardListener}: seed 000's operational evidence
 * (key conflicts, payload mismatches, takeovers, replays, processing time, results the guard could
 * not store, purges). Events carry the route (method and raw path, such as
 * {@code POST /orders/42/refunds}), never a key, a caller or request data. Raw paths may hold ids:
 * do not use the route as a metric tag unless your routes are fixed.
 */
public sealed interface GuardEvent {
  /**
   * A repeat got the stored result.
   *
   * @param route the request's method and raw path
   */
  record Replayed(String route) implements GuardEvent {}

  /**
   * A repeat found the key in flight and was answered 409 (after any wait).
   *
   * @param route the request's method and raw path
   */
  record Conflict(String route) implements GuardEvent {}

  /**
   * A repeat found the key in flight and waited for the first request, {@code waited} on the
   * guard's clock; {@code served} if the wait ended with the result (or a claim of its own), false
   * if with 409.
   *
   * @param route the request's method and raw path
   * @param waited how long the repeat waited, on the guard's clock
   * @param served true if the wait ended with the result or a claim of its own, false if with 409
   */
  record Waited(String route, Duration waited, boolean served) implements GuardEvent {}

  /**
   * A key came back with another payload.
   *
   * @param route the request's method and raw path
   */
  record Mismatch(String route) implements GuardEvent {}

  /**
   * A claim took over an in-flight claim whose lease had expired: its owner died or stalled.
   *
   * @param route the request's method and raw path
   */
  record Takeover(String route) implements GuardEvent {}

  /**
   * A claim ended, {@code processing} after it was made (the handler's time, on the guard's
   * clock): its result {@link CompletionResult#STORED stored}, or the claim
   * {@link CompletionResult#RELEASED released} (a status the storage policy does not keep, or a
   * handler that threw), or {@link CompletionResult#REFUSED refused}: the lease was lost, the
   * handler ran and its result was not stored, so its outcome is unknown to a retry. A completion
   * whose store call failed and whose retries in the background gave up (the store stayed down for
   * a lease period, or the guard closed first) also ends {@code REFUSED}, when it is given up: its
   * lease then runs out and a retry of the key runs the handler again.
   *
   * @param route the request's method and raw path
   * @param result how the claim ended: stored, released or refused
   * @param processing the time from the claim to its end, on the guard's clock
   */
  record Completed(String route, CompletionResult result, Duration processing) implements GuardEvent {}

  /**
   * At start, {@code claims} claims left in flight by an earlier run of this instance were found
   * dead and made available at once (see {@link IdempotencyGuard.Builder#instanceId}).
   *
   * @param claims how many dead claims were made available
   */
  record Recovered(int claims) implements GuardEvent {}

  /**
   * A purge deleted {@code records} records past retention: the guard's own job at its interval,
   * or {@link IdempotencyGuard#purgeExpired()}.
   *
   * @param records how many records the purge deleted
   */
  record Purged(int records) implements GuardEvent {}

  /**
   * The guard's background purge failed; records past retention stay until one succeeds (see
   * {@link IdempotencyGuard#lastPurgeFailure()}).
   *
   * @param failure what the purge threw
   */
  record PurgeFailed(Throwable failure) implements GuardEvent {}
}
