package dev.idem.core;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An operation as the journal holds it. Journals create these; apps read them (to look an
 * operation up after a restart, or to list what needs a re-drive).
 *
 * @param id the identity
 * @param reference the app's own reference, or null
 * @param fingerprint the request fingerprint
 * @param request the snapshot to re-send, without secrets
 * @param state the current state
 * @param owner the owner of the current or last claim, or null if never claimed
 * @param generation the fencing generation, 0 before the first claim
 * @param leaseExpiresAt when the current claim expires, or null
 * @param nextAttemptAt when a PENDING operation is due, or null for "now"
 * @param createdAt when it was begun, from which queued delivery's age limit counts; a re-drive
 *     ({@link Journal#redrive}) moves it to the re-drive only while no attempt may have reached
 *     the server
 * @param updatedAt when it last changed
 * @param attempts every recorded attempt, oldest first
 * @param response the stored response of a finished operation, or null
 * @param reason why it is in its state (for FAILED, UNCERTAIN and a waiting PENDING), or null
 * @param queued true if it was begun for a deliverer to send later (an outbox submission,
 *     {@code IdempotentExecutor.enqueue}); false if begun by a caller that sent it at once and was
 *     told its outcome (see {@link NewOperation#queued()})
 * @param outcomeDeliveredAt when a resume handler or an outbox awaiter was recorded as having
 *     received the outcome of this (terminal) operation ({@link Journal#recordOutcomeDelivered}), or
 *     null if none was (yet); reset by a re-drive
 */
public record OperationRecord(
    OperationId id,
    String reference,
    Fingerprint fingerprint,
    RequestSnapshot request,
    OperationState state,
    String owner,
    long generation,
    Instant leaseExpiresAt,
    Instant nextAttemptAt,
    Instant createdAt,
    Instant updatedAt,
    List<AttemptRecord> attempts,
    ResponseSnapshot response,
    String reason,
    boolean queued,
    Instant outcomeDeliveredAt) {

  /**
   * Validates the components and copies the attempt list.
   *
   * @param id the identity
   * @param reference the app's own reference, or null
   * @param fingerprint the request fingerprint
   * @param request the snapshot to re-send, without secrets
   * @param state the current state
   * @param owner the owner of the current or last claim, or null if never claimed
   * @param generation the fencing generation, 0 before the first claim
   * @param leaseExpiresAt when the current claim expires, or null
   * @param nextAttemptAt when a PENDING operation is due, or null for "now"
   * @param createdAt when it was begun, or re-driven with no attempt that may have reached the server
   * @param updatedAt when it last changed
   * @param attempts every recorded attempt, oldest first; copied into an immutable list
   * @param response the stored response of a finished operation, or null
   * @param reason why it is in its state, or null
   * @param queued true if it was begun for a deliverer to send later
   * @param outcomeDeliveredAt when a handler or awaiter was recorded as having received its outcome,
   *     or null
   * @throws NullPointerException if {@code id}, {@code fingerprint}, {@code request},
   *     {@code state}, {@code createdAt}, {@code updatedAt} or {@code attempts} is null, or
   *     {@code attempts} holds null
   */
  public OperationRecord {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(fingerprint, "fingerprint");
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(updatedAt, "updatedAt");
    attempts = List.copyOf(attempts);
  }

  /**
   * A fresh PENDING record for a new operation.
   *
   * @param op what {@link Journal#begin} was given
   * @return a PENDING record with generation 0, no owner, no attempts, due now, created and updated
   *     at {@code op.createdAt()}, queued as {@code op} says
   */
  public static OperationRecord pending(NewOperation op) {
    return new OperationRecord(op.id(), op.reference(), op.fingerprint(), op.request(), OperationState.PENDING,
        null, 0, null, null, op.createdAt(), op.createdAt(), List.of(), null, null, op.queued(), null);
  }

  /**
   * True if this operation's outcome is owed to a handler: it was queued, it is terminal, and no
   * resume handler or outbox awaiter is recorded as having received its outcome. A restart's
   * {@code IdempotentExecutor.resumePending} hands such an outcome to the operation's handler,
   * without sending anything.
   *
   * @return whether the outcome still has to be handed to the app
   */
  public boolean outcomeUndelivered() {
    return queued && state.isTerminal() && outcomeDeliveredAt == null;
  }

  /**
   * The app's reference, if it gave one.
   *
   * @return the reference, or empty
   */
  public Optional<String> appReference() {
    return Optional.ofNullable(reference);
  }

  /**
   * The stored response, if the operation finished with one.
   *
   * @return the stored response, or empty
   */
  public Optional<ResponseSnapshot> storedResponse() {
    return Optional.ofNullable(response);
  }

  /**
   * True if any recorded attempt may have taken effect without a response saying so.
   *
   * @return whether any attempt was classified {@link Classification#AMBIGUOUS}
   */
  public boolean hasAmbiguousAttempt() {
    return attempts.stream().anyMatch(AttemptRecord::isAmbiguous);
  }

  /**
   * True when an IN_FLIGHT claim is held by a live lease at {@code now}.
   *
   * @param now the instant to test the lease against
   * @return true if the operation is IN_FLIGHT and its lease expires after {@code now}
   */
  public boolean isLeasedAt(Instant now) {
    return state == OperationState.IN_FLIGHT && leaseExpiresAt != null && leaseExpiresAt.isAfter(now);
  }

  /**
   * A copy with a new state and the given fields; used by journal implementations.
   *
   * @param newState the new state (not checked here: journals check transitions first)
   * @param newOwner the owner of the claim, or null
   * @param newGeneration the fencing generation
   * @param newLeaseExpiresAt when the claim expires, or null
   * @param newNextAttemptAt when a PENDING operation is due, or null for now
   * @param at the update time
   * @param newResponse the stored response, or null
   * @param newReason why the operation is in its new state, or null
   * @return a new record; identity, reference, fingerprint, request, creation time, attempts,
   *     {@code queued} and {@code outcomeDeliveredAt} are kept
   */
  public OperationRecord with(OperationState newState, String newOwner, long newGeneration, Instant newLeaseExpiresAt,
      Instant newNextAttemptAt, Instant at, ResponseSnapshot newResponse, String newReason) {
    return new OperationRecord(id, reference, fingerprint, request, newState, newOwner, newGeneration,
        newLeaseExpiresAt, newNextAttemptAt, createdAt, at, attempts, newResponse, newReason, queued,
        outcomeDeliveredAt);
  }

  /**
   * A copy with another {@code outcomeDeliveredAt}; used by journal implementations. Nothing else
   * changes, not even {@code updatedAt}: recording who was told is not a change of the operation
   * (retention counts from the terminal transition).
   *
   * @param at when the outcome was handed to a handler or awaiter, or null to clear it (a re-drive)
   * @return a new record
   */
  public OperationRecord withOutcomeDeliveredAt(Instant at) {
    return new OperationRecord(id, reference, fingerprint, request, state, owner, generation, leaseExpiresAt,
        nextAttemptAt, createdAt, updatedAt, attempts, response, reason, queued, at);
  }

  /**
   * A copy with one more attempt; used by journal implementations.
   *
   * @param attempt the attempt to append
   * @param at the update time
   * @return a new record with {@code attempt} appended and {@code updatedAt} set to {@code at}; all
   *     else kept
   */
  public OperationRecord withAttempt(AttemptRecord attempt, Instant at) {
    return new OperationRecord(id, reference, fingerprint, request, state, owner, generation, leaseExpiresAt,
        nextAttemptAt, createdAt, at, appended(attempt), response, reason, queued, outcomeDeliveredAt);
  }

  /**
   * A copy with one more attempt and a transition, in one record: what the in-memory journal's
   * {@code recordAttemptAndTransition} keeps, without the intermediate copy that
   * {@code withAttempt(...).with(...)} would make on every successful call.
   */
  OperationRecord withAttemptAnd(AttemptRecord attempt, OperationState newState, String newOwner,
      long newGeneration, Instant newLeaseExpiresAt, Instant newNextAttemptAt, Instant at,
      ResponseSnapshot newResponse, String newReason) {
    return new OperationRecord(id, reference, fingerprint, request, newState, newOwner, newGeneration,
        newLeaseExpiresAt, newNextAttemptAt, createdAt, at, appended(attempt), newResponse, newReason, queued,
        outcomeDeliveredAt);
  }

  /**
   * The attempts with {@code attempt} appended, as the immutable list the constructor keeps as it
   * is (an array list would be copied once more there).
   */
  private List<AttemptRecord> appended(AttemptRecord attempt) {
    Objects.requireNonNull(attempt, "attempt");
    int n = attempts.size();
    if (n == 0) {
      return List.of(attempt);
    }
    AttemptRecord[] more = attempts.toArray(new AttemptRecord[n + 1]);
    more[n] = attempt;
    return List.of(more);
  }
}
