package dev.idem.server.spi;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.RecordId;
import dev.idem.server.RecordPage;
import dev.idem.server.RecordQuery;
import dev.idem.server.RecordState;
import dev.idem.server.RecordStats;
import java.time.Instant;
import java.util.Optional;

/**
 * Where the guard keeps operation records: the durable state machine of seed 000, not a cache.
 *
 * <p>Every method is one atomic step. {@link #claim} must never let two requests both win: in SQL
 * it is a single {@code INSERT ... ON CONFLICT} statement. Completion, renewal and release are
 * fenced: they act only if the record still carries the caller's generation and owner token and
 * is {@link RecordState#IN_FLIGHT}, so a handler whose claim was taken over changes nothing.
 *
 * <p>Implementations must be thread-safe. Every method may throw {@link IdempotencyStoreException}.
 */
public interface IdempotencyStore extends AutoCloseable {
  /**
   * Claims an operation, atomically. The claim succeeds when there is no record, or the record is
   * past retention, or {@link RecordState#RELEASED}, or in flight with an expired lease and the
   * same fingerprint (the owner crashed; its request is retried). A takeover increments the
   * generation.
   *
   * <p>An id with a NUL or an unpaired surrogate in any part is refused, never changed: PostgreSQL
   * refuses a NUL, and the drivers write an unpaired surrogate as '?', so a changed id would share
   * another caller's record. So is one with a part over its length limit
   * ({@link RecordId#MAX_CALLER_BYTES}, {@link RecordId#MAX_ROUTE_BYTES}, 255 bytes of key), which
   * PostgreSQL's primary-key index refuses. The guard never passes one (it answers such a request
   * 400, {@link Admission.Reason#IDENTITY_UNSTORABLE}); Idem's stores refuse one from any other caller.
   *
   * @param id the operation
   * @param fingerprint the request's fingerprint
   * @param owner a token unique to this claim
   * @param now the current time
   * @param leaseUntil when the new claim's lease ends
   * @param expiresAt when the new record's retention ends
   * @return the claim, or the record that stands in its way
   * @throws IllegalArgumentException if a part of {@code id} holds a NUL or an unpaired surrogate,
   *     or is over its length limit; nothing was written
   */
  ClaimAttempt claim(RecordId id, Fingerprint fingerprint, String owner, Instant now, Instant leaseUntil,
      Instant expiresAt);

  /**
   * Extends the lease of a claim still held: IN_FLIGHT at {@code generation} under {@code owner}.
   * The guard calls it from its store executor, for several claims at once but never twice at once
   * for one claim; a call may reach the store after the claim was completed or released, and then
   * changes nothing (the fence above). A lease that ran out with nobody taking the claim over is
   * still held (see {@link #complete}), so it is renewed.
   *
   * @param id the operation
   * @param generation the claim's generation
   * @param owner the claim's owner token
   * @param now the current time (the bundled stores do not need it: the fence is the generation)
   * @param leaseUntil the new end of the lease
   * @return false if the claim is no longer held (taken over, completed, released, purged)
   */
  boolean renew(RecordId id, long generation, String owner, Instant now, Instant leaseUntil);

  /**
   * Stores the result of a claimed operation, if the claim is still held: IN_FLIGHT at
   * {@code generation} under {@code owner}. The fence is the generation, not the lease: every
   * takeover bumps it, so an unchanged generation proves that no other handler ran, and a handler
   * whose lease ran out (a store outage that stopped its renewals, a long pause) with nobody taking
   * it over stores its result, which every retry is then replayed. (A store that also refused an
   * expired lease, as the bundled ones did before, answered such a handler 409 and left the record
   * to be taken over: the retry ran the handler a second time.) The store's write is atomic
   * against a takeover's, so one of the two wins.
   *
   * @param id the operation
   * @param generation the claim's generation
   * @param owner the claim's owner token
   * @param now the current time
   * @param response the result to replay
   * @param expiresAt the end of retention, counted from completion
   * @return false if the claim was lost: nothing was stored
   */
  boolean complete(RecordId id, long generation, String owner, Instant now, StoredResponse response,
      Instant expiresAt);

  /**
   * Releases a claim whose handler failed, so the next request claims the operation again.
   *
   * @param id the operation
   * @param generation the claim's generation
   * @param owner the claim's owner token
   * @return false if the claim was no longer held
   */
  boolean release(RecordId id, long generation, String owner);

  /**
   * Deletes records past retention, except claims whose lease is still live.
   *
   * @param now the current time
   * @return how many records were deleted
   */
  int purgeExpired(Instant now);

  /**
   * Reads a record, for operators and tests.
   *
   * @param id the operation
   * @return the record, if any, whatever its state or age; empty for an id that {@link #claim}
   *     refuses, since none is stored
   */
  Optional<StoredRecord> find(RecordId id);

  /**
   * Lists records for an operator, oldest claim first. The built-in stores implement it; a store
   * of your own may not.
   *
   * @param query which records, and how many at most
   * @param now the current time, for {@link RecordQuery#stuckOnly()} and {@link RecordQuery#olderThan()}
   * @return one page
   * @throws UnsupportedOperationException if this store cannot list its records
   */
  default RecordPage records(RecordQuery query, Instant now) {
    throw new UnsupportedOperationException(getClass().getName() + " cannot list its records");
  }

  /**
   * Counts records by state, for operators and metrics. The built-in stores implement it; a store
   * of your own may not.
   *
   * @param now the current time, to tell stuck claims from live ones
   * @return the counts
   * @throws UnsupportedOperationException if this store cannot count its records
   */
  default RecordStats stats(Instant now) {
    throw new UnsupportedOperationException(getClass().getName() + " cannot count its records");
  }

  /**
   * Ends the lease of every in-flight claim made by {@code holder}, now, because the caller knows
   * that holder is dead (an earlier run of the same instance). The next request with one of those
   * keys and the same payload takes it over at once, instead of waiting out the lease. Owner tokens
   * the guard passes to {@link #claim} start with the holder and a {@code /}; a store matches on
   * that prefix. The default does nothing: claims then wait out their lease.
   *
   * @param holder the dead holder, without the {@code /}
   * @return how many claims were ended
   */
  default int expireClaims(String holder) {
    return 0;
  }

  /** Releases the store's resources. Idempotent. */
  @Override
  void close();
}
