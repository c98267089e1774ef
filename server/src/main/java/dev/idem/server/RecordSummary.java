package dev.idem.server;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * One record as an operator sees it: identity, state and times, never the payload or the stored
 * body.
 *
 * @param id the operation
 * @param state where it is
 * @param generation the fencing generation: 1 for the first claim, one more per later claim
 * @param claimedAt when its current claim was made; the epoch for records written before this
 *     column existed
 * @param leaseUntil when an in-flight claim's lease ends
 * @param expiresAt the end of retention
 * @param holder the instance that made the current claim ({@link IdempotencyGuard.Builder#instanceId},
 *     or a random id per guard)
 * @param tookOver true when the current claim took over an expired one
 * @param status the stored status of a completed record
 */
public record RecordSummary(RecordId id, RecordState state, long generation, Instant claimedAt, Instant leaseUntil,
    Instant expiresAt, String holder, boolean tookOver, OptionalInt status) {
  /**
   * Makes the record.
   *
   * @param id the operation
   * @param state where it is
   * @param generation the fencing generation
   * @param claimedAt when its current claim was made
   * @param leaseUntil when an in-flight claim's lease ends
   * @param expiresAt the end of retention
   * @param holder the instance that made the current claim
   * @param tookOver true when the current claim took over an expired one
   * @param status the stored status of a completed record
   * @throws NullPointerException if any component is null
   */
  public RecordSummary {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(claimedAt, "claimedAt");
    Objects.requireNonNull(leaseUntil, "leaseUntil");
    Objects.requireNonNull(expiresAt, "expiresAt");
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(status, "status");
  }

  /**
   * Whether the record is in flight with an expired lease: its holder died or stalled.
   *
   * @param now the current time
   * @return true if stuck
   */
  public boolean stuck(Instant now) {
    return state == RecordState.IN_FLIGHT && !leaseUntil.isAfter(now);
  }

  /**
   * How long ago its current claim was made.
   *
   * @param now the current time
   * @return the age; zero if the claim is in the future of {@code now}
   */
  public Duration age(Instant now) {
    Duration d = Duration.between(claimedAt, now);
    return d.isNegative() ? Duration.ZERO : d;
  }

  /**
   * The holder of an owner token ({@code holder/incarnation/n} or {@code holder/n}): everything
   * before its last {@code /}.
   *
   * @param owner an owner token
   * @return the holder
   */
  static String holderOf(String owner) {
    int slash = owner.lastIndexOf('/');
    return slash < 0 ? owner : owner.substring(0, slash);
  }
}
