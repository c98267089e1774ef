package dev.idem.core.spi;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.JournalException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.internal.Checks;
import dev.idem.core.internal.Claims;
import dev.idem.core.internal.DueRule;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

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
 *   <li>What the caller is told is what the journal keeps: a {@link #transition} to FAILED or
 *       UNCERTAIN is durable when it returns (these end calls with an exception the caller acts
 *       on, and a crash must not turn one back into a resend). A durable journal may defer a
 *       transition to SUCCEEDED or PENDING, a {@link #recordAttempt} and the first {@link #claim}
 *       of an inline operation, because every crash that loses them leaves a state that resumes
 *       safely with the same key; it must make them durable when it is closed.</li>
 *   <li>The first claim of a queued operation ({@link NewOperation#queued()}) is durable before
 *       it returns, so that a queued operation still unclaimed after a crash is known never to
 *       have been sent.</li>
 *   <li>A journal is storage: it applies no safety rule of its own. A claim that takes an
 *       IN_FLIGHT operation over says so ({@link Lease#takeover()}) and records nothing else; the
 *       executor records the attempt the previous holder may have sent ({@link Takeover}).</li>
 *   <li>Paged reads ({@link #findDue}, {@link #findByState}, {@link #findUndelivered}) return at
 *       most the page size asked for, and may return fewer even when more follow: an empty page,
 *       and only an empty page, is the last. So a journal can bound a page by the bytes it holds
 *       (the JDBC journal stops a page at about 4 Mi characters of stored text: 100 requests with
 *       bodies near the 512 KiB limit took about 100 MB of heap, and a resume holds two pages);
 *       callers page on from the last record until a page comes back empty. A non-empty page
 *       always makes progress: every record in it is after {@code after}.</li>
 *   <li>Methods are thread-safe.</li>
 * </ul>
 * The test kit's {@code JournalContract} checks an implementation against this contract.
 * Failures to read or write throw {@link JournalException}.
 */
public interface Journal extends AutoCloseable {
  /**
   * Records a new operation as PENDING, or returns the existing record of the same identity.
   *
   * @param operation the identity, key, fingerprint and request snapshot to record
   * @return the record and whether this call created it
   * @throws IdempotencyKeyReusedException if the identity exists with another fingerprint
   * @throws JournalException if the record could not be made durable; then nothing may be sent. A
   *     journal that cannot tell whether its write took effect (a commit whose answer was lost) and
   *     cannot find out says so in the message: the record may then be durable, and is resumed
   *     with its key like any other
   * @throws IdempotencyException if the journal fails in any other way
   */
  BeginResult begin(NewOperation operation) throws IdempotencyException;

  /**
   * Begins an operation and, if this call created it, claims it for its first attempt under
   * {@code owner}: what {@link #begin} then {@link #claim} (at the operation's
   * {@link NewOperation#createdAt()}) would do, as one durable write where the journal can. An
   * executor's inline call makes its one synchronous write here (the JDBC journal: one INSERT of
   * the row already IN_FLIGHT). An operation that existed is returned as {@link #begin} returns
   * it, unclaimed: the caller claims it as for any resume, so that one instance never claims an
   * operation it is already executing.
   *
   * <p>Durable as {@link #begin} is: when it returns, the record and its claim are durable, and
   * nothing may be sent for an operation whose call threw. The default calls the two methods; it
   * is correct for every journal that implements them.
   *
   * @param operation the identity, key, fingerprint and request snapshot to record; not queued
   * @param owner the name of the claiming instance, unique among live instances
   * @param leaseFor how long the claim lasts before another owner may take over
   * @return the record (IN_FLIGHT under the lease if claimed), whether this call created it, and
   *     the lease; no lease for an existing operation, or if another owner claimed the new one
   *     first
   * @throws IllegalArgumentException if the operation is queued ({@link #begin} it instead), or
   *     {@code leaseFor} is not positive; then nothing is journaled
   * @throws IdempotencyKeyReusedException if the identity exists with another fingerprint
   * @throws JournalException if the record could not be made durable; then nothing may be sent. A
   *     journal that cannot tell whether its write took effect (a commit whose answer was lost) and
   *     cannot find out says so in the message: the record may then be durable, and is resumed
   *     with its key like any other
   * @throws IdempotencyException if the journal fails in any other way
   */
  default BeginResult beginAndClaim(NewOperation operation, String owner, Duration leaseFor)
      throws IdempotencyException {
    if (operation.queued()) {
      throw new IllegalArgumentException("a queued operation is claimed when it is delivered, not at its begin");
    }
    if (leaseFor.isNegative() || leaseFor.isZero()) {
      // Before the begin: a PENDING record left by a call that threw would be sent by a resume.
      throw new IllegalArgumentException("leaseFor must be positive: " + leaseFor);
    }
    BeginResult begun = begin(operation);
    if (!begun.created()) {
      return begun;
    }
    Instant now = operation.createdAt();
    // Through Claims: should another owner have claimed it in between, and let its lease expire,
    // this is a takeover, and the attempt that owner may have sent is recorded before any other.
    Optional<Lease> lease = Claims.claim(this, operation.id(), owner, now, leaseFor);
    if (lease.isEmpty()) {
      return begun; // another owner holds it: the caller's claim tells it so, as for an existing one
    }
    Lease l = lease.get();
    return new BeginResult(begun.record().with(OperationState.IN_FLIGHT, owner, l.generation(), l.expiresAt(), null,
        now, null, null), true, l);
  }

  /**
   * Finds an operation by identity.
   *
   * @param id the operation's identity
   * @return the stored record, or empty if the journal holds no operation with that identity
   *     (never created, or purged)
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
   */
  Optional<OperationRecord> find(OperationId id) throws IdempotencyException;

  /**
   * Finds the operations the app tagged with {@code reference} in {@code scope}, oldest first.
   *
   * @param scope the scope the reference was given in (the same one the operations were begun with)
   * @param reference the app's own reference, for example an order number
   * @return the matching records, oldest first; empty if there are none
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
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
   * @param id the operation to claim
   * @param owner the name of the claiming instance, unique among live instances
   * @param now the current time of the caller's clock; the lease expires at {@code now + leaseFor}
   * @param leaseFor how long the claim lasts before another owner may take over
   * @return the new lease, whose {@link Lease#takeover()} is true if the operation was IN_FLIGHT;
   *     or empty when the operation is terminal or held by another owner's live lease. The claim
   *     changes the state, owner, generation and lease only: it records no attempt
   * @throws JournalException if the claim could not be made durable (a durable journal makes every
   *     claim durable before it returns, except the first claim of an inline operation, which its
   *     begin stands for)
   * @throws IdempotencyException if the journal fails in any other way
   */
  Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor) throws IdempotencyException;

  /**
   * Claims one operation that an app's call named, as {@link #claim} does, but may first wait,
   * briefly and for a bounded time the journal chooses, for another process that is claiming or
   * updating it at this very moment, rather than return empty at once. The executor calls it for
   * an {@code execute} of an existing operation and a {@code resume(id)} or {@code resumeAsync(id)}
   * by the app, where an empty claim fails the app's call ({@code OperationPendingException}: call
   * again) although the other process may be done in milliseconds. Background passes (a resume
   * pass, an outbox dispatcher's deliveries) call {@link #claim}, so that instances sharing a
   * journal never wait on each other.
   *
   * <p>The default calls {@link #claim}: right for every journal whose claim never returns empty
   * for a claimable operation that another process merely holds for a moment. The JDBC journal on
   * PostgreSQL overrides it: its {@link #claim} skips a row another transaction has locked, and
   * this method waits up to 1.5 seconds for that lock.
   *
   * @param id the operation to claim
   * @param owner the name of the claiming instance, unique among live instances
   * @param now the current time of the caller's clock; the lease expires at {@code now + leaseFor}
   * @param leaseFor how long the claim lasts before another owner may take over
   * @return as {@link #claim}: the new lease, or empty when the operation is terminal, held by
   *     another owner's live lease, or still held by another process when the wait was over
   * @throws JournalException as {@link #claim}
   * @throws IdempotencyException if the journal fails in any other way
   */
  default Optional<Lease> claimWaiting(OperationId id, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    return claim(id, owner, now, leaseFor);
  }

  /**
   * Claims an operation as {@link #claim} does, but only if it is still at the state and generation
   * it was read at ({@code asRead}): one that changed since is left, and the answer is empty. A
   * background pass that read a due page a moment ago claims through it: another instance may
   * have sent the operation meanwhile and journaled it PENDING until its backoff or the server's
   * {@code Retry-After}, and a plain {@link #claim} takes any PENDING operation, so it would go out
   * again at once. The default reads the operation ({@link #find}) and claims it ({@link #claim})
   * only if it is still as read: a change between the two is not seen, so a journal should fence
   * the claim itself, in one step, as the bundled journals do.
   *
   * @param asRead the operation as the caller read it
   * @param owner the name of the claiming instance, unique among live instances
   * @param now the current time of the caller's clock; the lease expires at {@code now + leaseFor}
   * @param leaseFor how long the claim lasts before another owner may take over
   * @return as {@link #claim}, and empty too when the operation changed since it was read
   * @throws JournalException as {@link #claim}
   * @throws IdempotencyException if the journal fails in any other way
   */
  default Optional<Lease> claimIfUnchanged(OperationRecord asRead, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    Optional<OperationRecord> current = find(asRead.id());
    if (current.isEmpty() || current.get().state() != asRead.state()
        || current.get().generation() != asRead.generation()) {
      return Optional.empty();
    }
    return claim(asRead.id(), owner, now, leaseFor);
  }

  /**
   * Claims several operations for sending, as {@link #claim} claims one, in one durable write where
   * the journal can: a resume with several lanes claims the operations it is about to send a batch
   * at a time, so that a durable journal makes one write (one disk sync) for the batch instead of
   * one each. The default calls {@link #claimIfUnchanged} for each, in order.
   *
   * <p>A journal may claim an operation only if it is still as read in {@code asRead} (the same
   * state and generation), and return empty for one that changed since: the caller then claims
   * that one alone, with {@link #claim}, which says what became of it. Durable as {@link #claim}:
   * every claim returned is durable when this returns.
   *
   * <p>What the caller takes on: every operation claimed here is IN_FLIGHT under {@code owner}
   * before anything is sent for it, so a crash before it is sent leaves it claimed but unsent, and
   * a restart treats it exactly as any claimed operation: it may have been sent, it gets an
   * AMBIGUOUS attempt and is resent with the same key (so a later 4xx ends it UNCERTAIN, not
   * FAILED, and an age limit reached afterwards ends it UNCERTAIN too). A caller that does not
   * send a claimed operation after all gives the claim back ({@link #transition} to PENDING).
   *
   * @param asRead the operations as the caller read them (from {@link #findDue}, say)
   * @param owner the name of the claiming instance, unique among live instances
   * @param now the current time of the caller's clock; the leases expire at {@code now + leaseFor}
   * @param leaseFor how long the claims last before another owner may take over
   * @return one entry per operation of {@code asRead}, in its order: the new lease
   *     ({@link Lease#takeover()} true if the operation was IN_FLIGHT), or empty when it was not
   *     claimed (terminal, held by another owner's live lease, or changed since it was read)
   * @throws JournalException if the claims could not be made durable. The default, which claims
   *     one at a time, then gives back the claims it made (except takeovers); any claim left
   *     (a takeover, or one that could not be given back) is held by {@code owner} until its lease
   *     expires, or taken back at once by the next resume under the same owner, as a takeover
   * @throws IdempotencyException if the journal fails in any other way
   */
  default List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    List<Optional<Lease>> leases = new ArrayList<>(asRead.size());
    try {
      for (OperationRecord r : asRead) {
        leases.add(claimIfUnchanged(r, owner, now, leaseFor));
      }
    } catch (IdempotencyException | RuntimeException e) {
      // The claims made before the failure are given back, so that they stay known as never sent;
      // not a takeover's, whose holder may have sent: held, it owes an ambiguous attempt.
      for (int i = 0; i < leases.size(); i++) {
        Optional<Lease> lease = leases.get(i);
        if (lease.isPresent() && !lease.get().takeover()) {
          try {
            transition(asRead.get(i).id(), lease.get(), Transition.retryAt(now, now, "claim given back: " + e));
          } catch (IdempotencyException | RuntimeException suppressed) {
            // One instance thrown twice (a driver's kept failure) cannot suppress itself: the
            // IllegalArgumentException would replace the journal's failure and stop the give-back.
            if (suppressed != e) {
              e.addSuppressed(suppressed);
            }
          }
        }
      }
      throw e;
    }
    return leases;
  }

  /**
   * Appends an attempt to the history of an IN_FLIGHT operation.
   *
   * @param id the operation the attempt belongs to
   * @param lease the lease the caller holds on it, from {@link #claim}
   * @param attempt what was sent and what came back
   * @throws StaleOwnerException if {@code lease} is not the current one
   */
  void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException;

  /**
   * Moves an IN_FLIGHT operation held by {@code lease} to another state.
   *
   * @param id the operation to move
   * @param lease the lease the caller holds on it, from {@link #claim}
   * @param transition the target state and what to store with it (outcome, next attempt time...)
   * @return the updated record
   * @throws StaleOwnerException if {@code lease} is not the current one
   * @throws IllegalStateException if the transition is not allowed
   * @throws JournalException if the change could not be written, or, for a transition to FAILED or
   *     UNCERTAIN, could not be made durable: then the caller must not be told that ending
   */
  OperationRecord transition(OperationId id, Lease lease, Transition transition) throws IdempotencyException;

  /**
   * Appends an attempt and moves the operation, as {@link #recordAttempt} then {@link #transition}
   * would, but as one write: the executor ends every attempt this way. Durable exactly as the
   * transition alone would be (FAILED and UNCERTAIN when it returns); if it throws, neither the
   * attempt nor the transition may have been kept. The default calls the two methods; a journal
   * that can write both at once (the JDBC journal: one fenced UPDATE, nothing read back) overrides
   * it.
   *
   * @param id the operation
   * @param lease the lease the caller holds on it, from {@link #claim}
   * @param attempt the attempt that just ended
   * @param transition the target state and what to store with it
   * @throws StaleOwnerException if {@code lease} is not the current one
   * @throws IllegalStateException if the transition is not allowed
   * @throws JournalException as {@link #transition} does
   */
  default void recordAttemptAndTransition(OperationId id, Lease lease, AttemptRecord attempt, Transition transition)
      throws IdempotencyException {
    recordAttempt(id, lease, attempt);
    transition(id, lease, transition);
  }

  /**
   * Moves a PENDING operation that nobody holds straight to a terminal state (for example past the
   * server's key retention window).
   *
   * @param id the operation to abandon
   * @param transition the terminal state and what to store with it
   * @return the updated record
   * @throws IllegalArgumentException if the target state is not terminal
   * @throws IllegalStateException if the operation is not PENDING, or no operation has that
   *     identity
   * @throws JournalException if the change could not be made durable
   * @throws IdempotencyException if the journal fails in any other way
   */
  OperationRecord abandon(OperationId id, Transition transition) throws IdempotencyException;

  /**
   * Re-drives a FAILED or UNCERTAIN operation: back to PENDING, due now, same key and snapshot.
   * A delivery recorded for its old outcome is cleared: its next outcome is a new one.
   *
   * <p>Its {@link OperationRecord#createdAt()}, from which the age limit of queued delivery
   * ({@code maxPendingAge}) counts, moves to {@code now} only if no attempt in its history may have
   * reached the server ({@link AttemptRecord#mayHaveReachedServer}: none, or only attempts certainly
   * not sent): such an operation is begun anew, so that one re-driven after its age limit (it ended
   * FAILED, never sent, through an outage longer than the limit) is sent, not ended again by the
   * next resume or dispatcher. Otherwise {@code createdAt} is kept: the server's retention of the
   * key may have started at that attempt, and the age limit, which stands for the retention, must
   * keep bounding the time since it, so that such an operation is never resent with a key the
   * server has forgotten (past its age limit, the next resume ends it UNCERTAIN again, unsent, under
   * the default action). {@code updatedAt} becomes {@code now}; the attempts are kept with their own
   * times. The journal decides on the record as it re-drives it, in the same atomic step.
   *
   * @param id the operation to re-drive
   * @param now the current time; the operation becomes due at it, and counts as created at it if
   *     no attempt may have reached the server
   * @return the updated, PENDING record
   * @throws IllegalStateException if it is in any other state, or no operation has that identity
   * @throws JournalException if the change could not be made durable
   * @throws IdempotencyException if the journal fails in any other way
   */
  OperationRecord redrive(OperationId id, Instant now) throws IdempotencyException;

  /**
   * Re-drives an operation only if it is still as the caller read it: in the same state (FAILED or
   * UNCERTAIN) at the same generation. For a caller that lists operations and then acts on each,
   * as {@code reconcileUncertain} does: another pass, instance or operator may have settled or
   * re-driven one since it was listed, and a plain {@link #redrive} of it would succeed (a FAILED
   * operation may be re-driven), clear the delivery recorded for its outcome, and so have that
   * outcome settled and handed over a second time. This leaves such an operation as it is.
   *
   * <p>A journal should check and re-drive as one atomic step: the in-memory journal does both
   * under the operation's lock, the JDBC journal in one UPDATE fenced by state and generation. The
   * default, for journals written before this method, reads the operation with {@link #find} and
   * then calls {@link #redrive}: it is not atomic, so a write by another caller between the two
   * (a pass that settles the operation) is not seen, and the operation is re-driven from a state
   * the caller never read. Override it in a journal that more than one pass or instance shares.
   *
   * <p>Re-drives as {@link #redrive} does: the operation counts as created at {@code now} only if
   * no attempt may have reached the server.
   *
   * @param asRead the operation as the caller read it ({@link #findByState}, say)
   * @param now the current time; the operation becomes due at it
   * @return the updated, PENDING record (same key and snapshot, no delivery recorded); or empty,
   *     with nothing written, if the operation is in another state or at another generation than
   *     {@code asRead}, or is no longer in the journal (purged, or dropped by a bound)
   * @throws IllegalStateException if {@code asRead} is in a state that cannot be re-driven (not
   *     FAILED or UNCERTAIN)
   * @throws JournalException if the change could not be made durable
   * @throws IdempotencyException if the journal fails in any other way
   */
  default Optional<OperationRecord> redriveIfUnchanged(OperationRecord asRead, Instant now)
      throws IdempotencyException {
    Objects.requireNonNull(asRead, "asRead");
    Objects.requireNonNull(now, "now");
    OperationState.checkRedrive(asRead.state());
    Optional<OperationRecord> current = find(asRead.id());
    if (current.isEmpty() || current.get().state() != asRead.state()
        || current.get().generation() != asRead.generation()) {
      return Optional.empty();
    }
    try {
      return Optional.of(redrive(asRead.id(), now));
    } catch (IllegalStateException e) {
      // It left FAILED or UNCERTAIN, or the journal, since find: not as read either.
      return Optional.empty();
    }
  }

  /**
   * Settles an UNCERTAIN operation as the app's reconciliation found it, in one step, only if it
   * is still as the caller read it (UNCERTAIN, at the same generation): it becomes
   * {@code settlement}'s state (SUCCEEDED or FAILED) with its response and reason, nothing sent.
   * For {@code reconcileUncertain}, which asks the server out of band, often long after the attempt
   * and past the server's key retention: a SUCCEEDED answer then means the server holds the effect
   * but no longer knows the key, so the operation must never be sent again, and no state it passes
   * through on the way may be one a resume sends (PENDING, or IN_FLIGHT with a lease that runs
   * out): not for another executor or instance resuming the journal meanwhile, nor for a restart
   * after a crash between two writes.
   *
   * <p>The record it leaves is the one a re-drive, a claim under {@code owner} and a finishing
   * {@link #transition} would leave: {@code createdAt} as it was (a settlement sends nothing, so no
   * age limit is at stake; the creation time is kept for listings such as {@link #findByReference}),
   * {@code owner} as its owner, the generation one above the one
   * read (so that a lease from before is stale), no lease, no due time, {@code updatedAt} at
   * {@code settlement.at()}, the response and reason given, the attempts as they were, and no
   * delivery recorded (a queued operation's new outcome is owed to its handler). Durable when it
   * returns, SUCCEEDED as much as FAILED: the app may act on its reconciler's answer at once.
   *
   * <p>A journal should check and settle as one atomic write: the in-memory journal does it under
   * the operation's lock, the JDBC journal in one UPDATE fenced by state and generation. The
   * default, for journals written before this method, makes those three writes:
   * {@link #redriveIfUnchanged}, a {@link #claim} under {@code owner} for {@code leaseFor}, and
   * {@link #transition}. It is not atomic: between the first two the operation is PENDING and due,
   * and a resume that comes by (another executor or instance on the journal, or the restart after
   * a crash there) sends it again; a crash after the claim leaves it IN_FLIGHT, sent again once the
   * lease runs out; and it is only as durable as the journal's {@link #transition}, which may defer
   * SUCCEEDED. Override it in any journal a resume may read while a reconciliation runs.
   *
   * @param asRead the operation as the caller read it ({@link #findByState}, say); UNCERTAIN
   * @param owner the name of the settling instance, recorded as the operation's owner
   * @param leaseFor how long the default's claim lasts; a journal that settles in one write does
   *     not use it
   * @param settlement the state found (SUCCEEDED or FAILED), when, the response to keep (required
   *     for SUCCEEDED) and why; made with {@link Transition#finish}
   * @return the settled record; or empty, with nothing written, if the operation is in another
   *     state or at another generation than {@code asRead}, or is no longer in the journal (purged,
   *     or dropped by a bound). The default also returns empty if another owner claimed it between
   *     its re-drive and its claim (that owner then sends it)
   * @throws IllegalArgumentException if {@code settlement}'s state is not SUCCEEDED or FAILED
   * @throws IllegalStateException if {@code asRead} is not UNCERTAIN
   * @throws JournalException if the change could not be made durable
   * @throws IdempotencyException if the journal fails in any other way
   */
  default Optional<OperationRecord> settleIfUnchanged(OperationRecord asRead, String owner, Duration leaseFor,
      Transition settlement) throws IdempotencyException {
    Objects.requireNonNull(asRead, "asRead");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(leaseFor, "leaseFor");
    Objects.requireNonNull(settlement, "settlement");
    OperationState.checkSettle(asRead.state(), settlement.target());
    Instant now = settlement.at();
    if (redriveIfUnchanged(asRead, now).isEmpty()) {
      return Optional.empty();
    }
    // Through Claims, as every claim of the executor: a claim that takes the operation over (another
    // owner claimed it after the re-drive and its lease ran out) records the attempt it may have sent.
    Optional<Lease> lease = Claims.claim(this, asRead.id(), owner, now, leaseFor);
    if (lease.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(transition(asRead.id(), lease.get(), settlement));
  }

  /**
   * Records that a resume handler or an outbox awaiter received the outcome of a terminal operation,
   * so that a restart does not hand it again ({@link OperationRecord#outcomeUndelivered()}). A
   * journal may defer the write: losing it in a crash only means that the outcome is handed once
   * more, marked as read from the journal. It does not change {@code updatedAt}.
   *
   * <p>The default records nothing and returns false: a journal that does not track delivery never
   * hands an outcome again, whether or not a handler received it.
   *
   * @param id the operation
   * @param at when the outcome was handed over
   * @return true if this call recorded it; false if a delivery was already recorded, the operation
   *     is not terminal, or the journal does not hold it (purged)
   * @throws JournalException if the journal cannot be written
   * @throws IdempotencyException if the journal fails in any other way
   */
  default boolean recordOutcomeDelivered(OperationId id, Instant at) throws IdempotencyException {
    return false;
  }

  /**
   * Records that the outcomes of {@code ids} were received, as {@link #recordOutcomeDelivered} does
   * for each: a resume with several lanes records them a batch at a time, so that a journal can
   * write them in one unit of work instead of one each. The default calls
   * {@link #recordOutcomeDelivered} for each, in order.
   *
   * @param ids the operations
   * @param at when their outcomes were handed over
   * @return how many this call recorded
   * @throws JournalException if the journal cannot be written (some may have been recorded)
   * @throws IdempotencyException if the journal fails in any other way
   */
  default int recordOutcomesDelivered(List<OperationId> ids, Instant at) throws IdempotencyException {
    int recorded = 0;
    for (OperationId id : ids) {
      if (recordOutcomeDelivered(id, at)) {
        recorded++;
      }
    }
    return recorded;
  }

  /**
   * One page of operations whose outcome is owed to a handler
   * ({@link OperationRecord#outcomeUndelivered()}: queued, terminal, and no delivery recorded),
   * ordered by identity and paged like {@link #findDue}. After a crash between an operation's
   * terminal write and its handler's callback, this is how a restart finds the outcome nobody was
   * told.
   *
   * <p>The default returns an empty page (see {@link #recordOutcomeDelivered}).
   *
   * @param after the last identity of the previous page, or null for the first page
   * @param limit the page size, at least 1
   * @return at most {@code limit} records, ordered by identity; possibly fewer while more follow
   *     (see the class comment); empty means there are no more
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
   */
  default List<OperationRecord> findUndelivered(OperationId after, int limit) throws IdempotencyException {
    Checks.atLeastOne(limit, "limit");
    return List.of();
  }

  /**
   * One page of operations that are due at {@code now}: PENDING with no {@code nextAttemptAt} or
   * one not after {@code now}, and IN_FLIGHT with an expired lease. Ordered by identity so that
   * callers page with {@code after}, keeping memory flat however many are pending.
   *
   * @param now the current time against which due times and leases are compared
   * @param after the last identity of the previous page, or null for the first page
   * @param limit the page size, at least 1
   * @return at most {@code limit} due records, ordered by identity; possibly fewer while more follow
   *     (see the class comment); empty means there are no more
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
   */
  List<OperationRecord> findDue(Instant now, OperationId after, int limit) throws IdempotencyException;

  /**
   * One page of the operations due for {@code owner} at {@code now}, in the order a deliverer
   * should take them: what {@code resumePending} and the outbox dispatcher page through, so that
   * both follow one rule. Due for {@code owner}:
   * <ul>
   *   <li>what {@link #findDue(Instant, OperationId, int)} returns: PENDING with no
   *       {@code nextAttemptAt} or one not after {@code now}, and IN_FLIGHT with an expired
   *       lease;</li>
   *   <li>and IN_FLIGHT under a live lease that {@code owner} itself holds. Owner names are unique
   *       among live instances, so such a lease is an earlier incarnation's (an instance restarted
   *       under the same name takes its work back at once, as {@link #claim} allows, and the claim
   *       records the attempt the dead holder may have sent), or an execution running in the
   *       caller right now, which the caller's single-flight joins rather than claims again.</li>
   * </ul>
   * Order: the {@code owner}'s own live leases first, so that a restart does not wait behind the
   * whole backlog; then the rest in the order they became due, oldest first (a PENDING
   * operation's {@code nextAttemptAt}, or its {@code updatedAt} if it has none; an expired
   * lease's expiry), then by identity.
   *
   * <p>Pass the same {@code now} for every page of one pass: the order depends on it. Memory stays
   * flat however many are due: page with the last record of the previous page.
   *
   * <p>The default, for journals written before this method, builds it from
   * {@link #findByState} (the owner's own leases) and {@link #findDue(Instant, OperationId, int)}
   * (the rest), and orders each part by identity rather than by due time.
   *
   * @param now the current time against which due times and leases are compared
   * @param owner the name of the caller's instance (its executor's owner)
   * @param after the last record of the previous page, as returned, or null for the first page
   * @param limit the page size, at least 1
   * @return at most {@code limit} due records, in the order above; possibly fewer while more
   *     follow (see the class comment); empty means there are no more
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
   */
  default List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
      throws IdempotencyException {
    Objects.requireNonNull(now, "now");
    Objects.requireNonNull(owner, "owner");
    Checks.atLeastOne(limit, "limit");
    List<OperationRecord> page = new ArrayList<>(Math.min(limit, 1024));
    OperationId cursor = after == null ? null : after.id();
    // A page of the parts' pages may be short while more follow (and leases of others are left
    // out of the first part, own leases out of the second): each part reads on until it found
    // something or came back empty, so that this returns empty only at the end of both, and
    // returns what it found at once rather than filling the page past the short pages' bound.
    if (after == null || DueRule.isOwnLease(after, owner, now)) {
      while (true) {
        List<OperationRecord> leased = findByState(OperationState.IN_FLIGHT, cursor, limit);
        if (leased.isEmpty()) {
          break;
        }
        for (OperationRecord r : leased) {
          if (DueRule.isOwnLease(r, owner, now) && page.size() < limit) {
            page.add(r);
          }
        }
        if (!page.isEmpty()) {
          return page;
        }
        cursor = leased.get(leased.size() - 1).id();
      }
      cursor = null;
    }
    while (true) {
      List<OperationRecord> due = findDue(now, cursor, limit);
      if (due.isEmpty()) {
        return page;
      }
      for (OperationRecord r : due) {
        if (!DueRule.isOwnLease(r, owner, now)) {
          page.add(r);
        }
      }
      if (!page.isEmpty()) {
        return page;
      }
      cursor = due.get(due.size() - 1).id();
    }
  }

  /**
   * {@link #findDue(Instant, String, OperationRecord, int)}, of the operations whose name is one of
   * {@code names} only: what an outbox dispatcher pages through, which delivers the names it
   * registers and leaves the others where they are. In the same order, paged the same way (with
   * the last record of the previous page, which is one of these). Without it, a dispatcher read
   * every due operation of every other name on each poll: a journal shared with a service whose
   * target is down (its queue due and older than anything this one submits) had each instance read
   * that whole backlog, every poll.
   *
   * <p>The default reads the pages of {@link #findDue(Instant, String, OperationRecord, int)} and
   * keeps the operations of these names (reading on past a page that has none, so that it returns
   * empty only at the end); a journal that can filter while it reads should.
   *
   * @param now the current time against which due times and leases are compared
   * @param owner the name of the caller's instance (its executor's owner)
   * @param names the operation names to return; not empty
   * @param after the last record of the previous page, as returned, or null for the first page
   * @param limit the page size, at least 1
   * @return at most {@code limit} due records of these names, in that order; possibly fewer while
   *     more follow (see the class comment); empty means there are no more
   * @throws IllegalArgumentException if {@code names} is empty
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
   */
  default List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
      int limit) throws IdempotencyException {
    if (names.isEmpty()) {
      throw new IllegalArgumentException("names is empty: a page of no names is always empty");
    }
    OperationRecord cursor = after;
    while (true) {
      List<OperationRecord> due = findDue(now, owner, cursor, limit);
      if (due.isEmpty()) {
        return due;
      }
      List<OperationRecord> page = ofNames(due, names);
      if (!page.isEmpty()) {
        return page;
      }
      cursor = due.get(due.size() - 1);
    }
  }

  /**
   * One page of operations in {@code state}, ordered by identity, paged like {@link #findDue}.
   *
   * @param state the state to list
   * @param after the last identity of the previous page, or null for the first page
   * @param limit the page size, at least 1
   * @return at most {@code limit} records, ordered by identity; possibly fewer while more follow
   *     (see the class comment); empty means there are no more
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
   */
  List<OperationRecord> findByState(OperationState state, OperationId after, int limit) throws IdempotencyException;

  /**
   * {@link #findByState(OperationState, OperationId, int)}, of the operations whose name is one of
   * {@code names} only: what the drain check of an outbox dispatcher's {@code shutdown(timeout)}
   * pages through (the PENDING and the IN_FLIGHT operations of the names it registers). In the same
   * order, by identity, paged the same way (with the identity of the last record of the previous
   * page, which is one of these). Without it, every drain check read every unfinished operation of
   * every other name: a journal shared with a service whose target is down had a stopping instance
   * read and decode that whole backlog after each of its polls until its drain ended.
   *
   * <p>Like the read it filters, it takes no lock and compares no instant: an operation another
   * process holds locked at that moment is in the page. (The names overload of
   * {@link #findDue(Instant, String, Set, OperationRecord, int) findDue} serves a poll, which may
   * pass over such a row; a drain check that did ended "drained" with one of its operations still
   * queued.)
   *
   * <p>The default reads the pages of {@link #findByState(OperationState, OperationId, int)} and
   * keeps the operations of these names (reading on past a page that has none, so that it returns
   * empty only at the end); a journal that can filter while it reads should.
   *
   * @param state the state to list
   * @param names the operation names to return; not empty
   * @param after the last identity of the previous page, or null for the first page
   * @param limit the page size, at least 1
   * @return at most {@code limit} records in {@code state} of these names, ordered by identity;
   *     possibly fewer while more follow (see the class comment); empty means there are no more
   * @throws IllegalArgumentException if {@code names} is empty, or {@code limit} is less than 1
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
   */
  default List<OperationRecord> findByState(OperationState state, Set<String> names, OperationId after, int limit)
      throws IdempotencyException {
    if (names.isEmpty()) {
      throw new IllegalArgumentException("names is empty: a page of no names is always empty");
    }
    OperationId cursor = after;
    while (true) {
      List<OperationRecord> inState = findByState(state, cursor, limit);
      if (inState.isEmpty()) {
        return inState;
      }
      List<OperationRecord> page = ofNames(inState, names);
      if (!page.isEmpty()) {
        return page;
      }
      cursor = inState.get(inState.size() - 1).id();
    }
  }

  /** The records of {@code page} whose operation name is one of {@code names}, in its order. */
  private static List<OperationRecord> ofNames(List<OperationRecord> page, Set<String> names) {
    List<OperationRecord> kept = new ArrayList<>(page.size());
    for (OperationRecord r : page) {
      if (names.contains(r.id().operation())) {
        kept.add(r);
      }
    }
    return kept;
  }

  /**
   * How many operations are in {@code state}; for metrics such as the pending-queue length. The
   * default pages through {@link #findByState}; implementations should answer with one query.
   *
   * @param state the state to count
   * @return the number of operations in {@code state}, zero if there are none
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
   */
  default long count(OperationState state) throws IdempotencyException {
    long n = 0;
    OperationId after = null;
    while (true) {
      List<OperationRecord> page = findByState(state, after, 500);
      if (page.isEmpty()) {
        return n;
      }
      n += page.size();
      after = page.get(page.size() - 1).id();
    }
  }

  /**
   * When the oldest operation in {@code state} was created, if there is one; for the age of the
   * oldest pending operation. The default pages through {@link #findByState}.
   *
   * @param state the state to look in
   * @return the creation time of the oldest operation in {@code state}, or empty if there is none
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
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
      if (page.isEmpty()) {
        return Optional.ofNullable(oldest);
      }
      after = page.get(page.size() - 1).id();
    }
  }

  /**
   * Deletes terminal operations last updated before {@code before}. Non-terminal operations are
   * never deleted, however old, and neither is a terminal one whose outcome is still owed to a
   * handler ({@link OperationRecord#outcomeUndelivered()}: queued, and no delivery recorded), which
   * is how the next {@code resumePending} hands that outcome over: it goes with the first purge
   * after its delivery is recorded. A journal that does not track delivery (the defaults of
   * {@link #recordOutcomeDelivered} and {@link #findUndelivered}) owes nothing, so it may delete
   * every old terminal operation.
   *
   * @param before the cut-off: terminal operations updated strictly before it, and owed to no
   *     handler, are deleted
   * @return how many were deleted
   * @throws JournalException if the deletion failed
   * @throws IdempotencyException if the journal fails in any other way
   */
  int purge(Instant before) throws IdempotencyException;

  /**
   * Releases the journal's resources.
   *
   * @throws JournalException if the resources could not be released cleanly
   * @throws IdempotencyException if the journal fails in any other way
   */
  @Override
  void close() throws IdempotencyException;
}
