package dev.idem.server.spi;

import java.util.Objects;

/** What {@link IdempotencyStore#claim} found: the claim is ours, or someone else's record stands. */
public sealed interface ClaimAttempt {
  /**
   * The caller holds the operation now, under this generation.
   *
   * @param generation the fencing generation to pass to renew, complete and release
   * @param tookOver true when the claim replaced an in-flight claim whose lease had expired (its
   *     owner died or stalled), for metrics and logs
   */
  record Claimed(long generation, boolean tookOver) implements ClaimAttempt {
    /**
     * A claim that took nothing over.
     *
     * @param generation the fencing generation to pass to renew, complete and release
     */
    public Claimed(long generation) {
      this(generation, false);
    }
  }

  /**
   * A record that this request could not take over: in flight under a live lease, completed
   * within retention, or in flight with an expired lease but another fingerprint.
   *
   * @param record the record as read just after the claim failed
   */
  record Existing(StoredRecord record) implements ClaimAttempt {
    /**
     * Makes the record.
     *
     * @param record the record as read just after the claim failed
     * @throws NullPointerException if record is null
     */
    public Existing {
      Objects.requireNonNull(record, "record");
    }
  }

  /**
   * The claim failed, but the record was gone (released, purged) by the time it was read; the
   * request may simply be retried.
   */
  record Vanished() implements ClaimAttempt {}
}
