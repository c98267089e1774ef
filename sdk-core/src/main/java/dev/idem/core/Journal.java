package dev.idem.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Where operations live between attempts, across crashes and restarts. The persistence module
 * implements it over JDBC; {@link InMemoryJournal} keeps it in memory, for tests and for apps that
 * accept losing pending work when the process dies.
 *
 * <p>Contract for every implementation:
 * <ul>
 *   <li>{@link #begin} is an atomic claim of the identity and is durable when it returns: nothing
 *       is sent for an operation whose begin did not return.</li>
 *   <li>Every state change goes through {@link OperationState#checkTransition} (or
 *       {@link OperationState#checkRedrive}); terminal states are absorbing.</li>
 *   <li>Writes on an IN_FLIGHT operation carry its {@link Lease}; a stale owner or generation
 *       changes nothing and gets {@link StaleOwnerException}.</li>
 *   <li>Methods are thread-safe.</li>
 * </ul>
 * Failures to read or write throw {@link JournalException}.
 */
public interface Journal extends AutoCloseable {
  /**
   * Records a new operation as PENDING, or returns the existing record of the same identity.
   *
   * @return the record and whether this call created it
   * @throws IdempotencyKeyReusedException if the identity exists with another fingerprint
   * @throws JournalException if the record could not be made durable; then nothing may be sent
   */
  BeginResult begin(NewOperation operation) throws IdempotencyException;

  /** Finds an operation by identity. */
  Optional<OperationRecord> find(OperationId id) throws IdempotencyException;

  /**
   * Finds the operations the app tagged with {@code reference} in {@code scope}, oldest first.
   */
  List<OperationRecord> findByReference(String scope, String reference) throws IdempotencyException;

  /**
   * Claims an operation for sending: PENDING, or IN_FLIGHT with an expired lease, becomes
   * IN_FLIGHT under {@code owner} with the generation bumped by one. An IN_FLIGHT operation whose
   * live lease {@code owner} itself holds should be claimable too: owner names are unique among
   * live instances, so that is a restarted instance reclaiming what its dead incarnation held (the
   * executor's single-flight keeps one instance from claiming twice). A journal that refuses makes
   * the restarted instance wait for the lease to expire instead.
   *
   * @param leaseFor how long the claim lasts before another owner may take over
   * @return the new lease, or empty when the operation is terminal or held by another owner's live
   *     lease
   */
  Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor) throws IdempotencyException;

  /**
   * Appends an attempt to the history of an IN_FLIGHT operation.
   *
   * @throws StaleOwnerException if {@code lease} is not the current one
   */
  void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException;

  /**
   * Moves an IN_FLIGHT operation held by {@code lease} to another state.
   *
   * @return the updated record
   * @throws StaleOwnerException if {@code lease} is not the current one
   * @throws IllegalStateException if the transition is not allowed
   */
  OperationRecord transition(OperationId id, Lease lease, Transition transition) throws IdempotencyException;

  /**
   * Moves a PENDING operation that nobody holds straight to a terminal state (for example past the
   * server's key retention window).
   *
   * @throws IllegalStateException if the operation is not PENDING
   */
  OperationRecord abandon(OperationId id, Transition transition) throws IdempotencyException;

  /**
   * Re-drives a FAILED or UNCERTAIN operation: back to PENDING, due now, same key and snapshot.
   *
   * @throws IllegalStateException if it is in any other state
   */
  OperationRecord redrive(OperationId id, Instant now) throws IdempotencyException;

  /**
   * One page of operations that are due at {@code now}: PENDING with no {@code nextAttemptAt} or
   * one not after {@code now}, and IN_FLIGHT with an expired lease. Ordered by identity so that
   * callers page with {@code after}, keeping memory flat however many are pending.
   *
   * @param after the last identity of the previous page, or null for the first page
   * @param limit the page size, at least 1
   */
  List<OperationRecord> findDue(Instant now, OperationId after, int limit) throws IdempotencyException;

  /** One page of operations in {@code state}, ordered by identity, paged like {@link #findDue}. */
  List<OperationRecord> findByState(OperationState state, OperationId after, int limit) throws IdempotencyException;

  /**
   * How many operations are in {@code state}; for metrics such as the pending-queue length. The
   * default pages through {@link #findByState}; implementations should answer with one query.
   */
  default long count(OperationState state) throws IdempotencyException {
    long n = 0;
    OperationId after = null;
    while (true) {
      List<OperationRecord> page = findByState(state, after, 500);
      n += page.size();
      if (page.size() < 500) {
        return n;
      }
      after = page.get(page.size() - 1).id();
    }
  }

  /**
   * When the oldest operation in {@code state} was created, if there is one; for the age of the
   * oldest pending operation. The default pages through {@link #findByState}.
   */
  default Optional<Instant> oldestCreatedAt(OperationState state) throws IdempotencyException {
    Instant oldest = null;
    OperationId after = null;
    while (true) {
      List<OperationRecord> page = findByState(state, after, 500);
      for (OperationRecord r : page) {
        if (oldest == null || r.createdAt().isBefore(oldest)) {
          oldest = r.createdAt();
        }
      }
      if (page.size() < 500) {
        return Optional.ofNullable(oldest);
      }
      after = page.get(page.size() - 1).id();
    }
  }

  /**
   * Deletes terminal operations last updated before {@code before}.
   *
   * @return how many were deleted
   */
  int purge(Instant before) throws IdempotencyException;

  /** Releases the journal's resources. */
  @Override
  void close() throws IdempotencyException;
}
