package dev.idem.core.internal;

import dev.idem.core.AttemptRecord;
import dev.idem.core.resume.ExpiredPendingAction;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The age limit of queued delivery, and the server's key retention behind it. Once the server
 * forgets a key, a resend of an operation that may already have taken effect runs it a second
 * time; so queued delivery (resume, an outbox) stops sending an operation at its age limit,
 * {@code maxPendingAge} after its creation, which is never above the retention. A re-drive
 * moves the creation to the re-drive only while no attempt may have reached the server (a
 * never-sent operation begins anew); once one may have, the server's retention of the key may
 * have started at it, so the limit keeps counting from the first creation (see
 * {@code Journal.redrive}). At the limit the
 * operation ends: FAILED if no attempt can have reached the server (a never-sent operation can
 * honestly fail), UNCERTAIN otherwise. Under {@link ExpiredPendingAction#RESEND} there is no age
 * limit. An inline call (execute, executeAsync) that creates its operation is not subject to it:
 * it ends within its own deadline. One that finds its operation journaled already, unfinished,
 * is: executing the same Operation again is a resend as much as a resume is, so the executor ends
 * such an operation here first, as resume does, and sends nothing; and the call's attempt loop
 * has the limit too, so that no retry of it goes out at or past it ({@code AttemptLoop}).
 *
 * <p>Thread-safe: immutable, and the journal it writes is thread-safe.
 */
public final class KeyRetention {
  private static final Logger LOG = LoggerFactory.getLogger(KeyRetention.class);

  private final EngineSettings settings;
  private final Duration retention;
  private final Duration maxPendingAge;
  private final ExpiredPendingAction action;

  /**
   * @param retention how long the server keeps a key
   * @param maxPendingAge the age limit, positive and not above {@code retention} (the executor's
   *     builder refuses one above it, with the reason)
   * @param action whether the age limit applies (MARK_UNCERTAIN) or not (RESEND)
   */
  public KeyRetention(EngineSettings settings, Duration retention, Duration maxPendingAge,
      ExpiredPendingAction action) {
    this.settings = settings;
    this.retention = retention;
    this.maxPendingAge = maxPendingAge;
    this.action = action;
  }

  /**
   * The instant from which queued delivery no longer sends {@code record}: its creation plus the
   * age limit; empty under {@link ExpiredPendingAction#RESEND}.
   */
  public Optional<Instant> ageLimitOf(OperationRecord record) {
    return action == ExpiredPendingAction.RESEND ? Optional.empty()
        : Optional.of(record.createdAt().plus(maxPendingAge));
  }

  /** True if {@code record} is unfinished and has reached its age limit (whatever the action). */
  public boolean isExpired(OperationRecord record) {
    return !record.state().isTerminal()
        && !settings.clock().instant().isBefore(record.createdAt().plus(maxPendingAge));
  }

  /**
   * True if queued delivery ends {@code record} rather than send it: it is unfinished, has reached
   * its age limit, and the action is not RESEND.
   */
  public boolean endsAtAgeLimit(OperationRecord record) {
    return action != ExpiredPendingAction.RESEND && isExpired(record);
  }

  /**
   * Ends {@code record} if it has reached its age limit and the action is not RESEND: FAILED if no
   * attempt can have reached the server, else UNCERTAIN. Nothing is sent. It claims the operation
   * and decides on the record read under that claim ({@link #expireClaimed}), not on
   * {@code record}: an operation re-driven since it was read (its age counts from the re-drive
   * then) is not ended, and the claim is given back (PENDING, due now), so that the caller sends it.
   *
   * <p>Call it only as the leader of the operation's single flight: its claim is made under this
   * executor's owner, and the journal lets an owner re-claim its own lease, so outside the flight
   * it would take over the live lease of an execution of the same operation running in this
   * executor, and record a phantom attempt for it.
   *
   * @return the state it was ended in; otherwise PENDING (not expired, RESEND, re-driven since it
   *     was read, or held by another owner, whose own resume decides)
   * @throws IdempotencyException from the journal
   */
  public OperationState expireIfDue(OperationRecord record) throws IdempotencyException {
    if (!isExpired(record) || action == ExpiredPendingAction.RESEND) {
      return OperationState.PENDING;
    }
    Instant now = settings.clock().instant();
    Optional<Lease> lease = Claims.claim(settings.journal(), record.id(), settings.owner(), now, settings.leaseFor());
    if (lease.isEmpty()) {
      return OperationState.PENDING;
    }
    OperationState ended = expireClaimed(record, lease.get());
    if (!ended.isTerminal()) {
      // Re-driven between the caller's read and this claim: young again. Kept, the claim would hold
      // it IN_FLIGHT, unsent, until its lease expired; given back, the caller sends it now.
      Claims.giveBack(settings.journal(), record.id(), lease.get(), settings.clock().instant(),
          "claimed to end at its age limit, given back unsent: re-driven since it was read");
    }
    return ended;
  }

  /**
   * {@link #expireIfDue} for an operation the caller claimed already, as a concurrent resume pass
   * claims a batch before a lane takes each of its operations: if it has reached its age limit
   * (and the action is not RESEND), it is ended under {@code lease}, which that consumes, as
   * {@code expireIfDue} ends it under its own claim. Call it as the leader of the operation's
   * single flight, for the reason {@code expireIfDue} gives.
   *
   * @param asRead the operation as read before the claim
   * @param lease the caller's claim of it
   * @return the state it was ended in; otherwise PENDING, and the caller still holds {@code lease}
   *     (not expired, RESEND, or re-driven since it was read: its age counts from the re-drive then)
   * @throws IdempotencyException from the journal; the claim is then left as it is (the journal's
   *     {@code StaleOwnerException} if another owner took it over meanwhile)
   */
  public OperationState expireClaimed(OperationRecord asRead, Lease lease) throws IdempotencyException {
    if (!isExpired(asRead) || action == ExpiredPendingAction.RESEND) {
      return OperationState.PENDING;  // a re-drive only moves the creation later: not expired now either
    }
    // Read under the claim: a takeover added the holder's attempt, and a re-drive since the read
    // moved the creation.
    OperationRecord current = settings.journal().find(asRead.id()).orElse(asRead);
    if (!isExpired(current)) {
      return OperationState.PENDING;
    }
    return end(asRead.id(), lease, current, settings.clock().instant());
  }

  /** Ends {@code current}, read under {@code lease}, at its age limit: nothing is sent. */
  private OperationState end(OperationId id, Lease lease, OperationRecord current, Instant now)
      throws IdempotencyException {
    OperationState target = mayHaveReachedServer(current.attempts()) ? OperationState.UNCERTAIN
        : OperationState.FAILED;
    String reason = reason(Duration.between(current.createdAt(), now), target);
    // The stored response went through the rule when it was written, unless an earlier version wrote it.
    settings.journal().transition(id, lease, settings.secrets().persistable(
        Transition.finish(target, now, current.response(), reason)));
    Duration age = Duration.between(current.createdAt(), now);
    settings.emit(target == OperationState.UNCERTAIN
        ? new IdemEvent.Uncertain(id, current.attempts().size(), age, reason)
        : new IdemEvent.Failed(id, current.attempts().size(), age, reason));
    LOG.warn("operation {} reached its age limit of {} unsent or unanswered; marked {}", id, maxPendingAge,
        target);
    return target;
  }

  /**
   * True if a re-drive of {@code record} with the same key cannot safely send it: an attempt may
   * have reached the server and the operation is past its age limit, which a re-drive does not
   * move for it ({@code Journal.redrive}); the server may have forgotten the key, and queued
   * delivery ends it again, unsent (under RESEND it would be resent with the forgotten key).
   */
  public boolean redriveCannotSend(OperationRecord record) {
    return mayHaveReachedServer(record.attempts())
        && !settings.clock().instant().isBefore(record.createdAt().plus(maxPendingAge));
  }

  /**
   * Warns, naming the operation, that {@code redriven} was re-driven although
   * {@link #redriveCannotSend} holds for it: the operator's re-drive does not deliver it.
   */
  public void warnIfRedriveCannotSend(OperationRecord redriven) {
    if (!redriveCannotSend(redriven)) {
      return;
    }
    LOG.warn("operation {} re-driven past its age limit of {} (created {}) after an attempt that may have reached"
        + " the server, which may have forgotten its key: {}; reconcile it, and if its effect does not exist send it"
        + " again as a new operation (a new key)", redriven.id(), maxPendingAge, redriven.createdAt(),
        action == ExpiredPendingAction.RESEND
            ? "under ExpiredPendingAction.RESEND the next resume sends it again with that key, unprotected"
            : "the next resume ends it UNCERTAIN again, unsent");
  }

  /** Why an operation ended at its age limit, in {@code target}. */
  String reason(Duration age, OperationState target) {
    String limit = "not sent again: pending " + age + " after creation, at its age limit (maxPendingAge "
        + maxPendingAge + ", within the server's key retention of " + retention + ")";
    return target == OperationState.FAILED
        ? limit + "; no attempt can have reached the server"
        : limit + "; an attempt may have reached the server, and a resend after the server forgets the key could"
            + " run it twice";
  }

  /**
   * Whether any attempt in {@code attempts} may have reached the server: every one except those
   * certainly not sent (SAFE: connection refused, DNS failure, no route...); see
   * {@link AttemptRecord#mayHaveReachedServer}.
   */
  public static boolean mayHaveReachedServer(List<AttemptRecord> attempts) {
    return attempts.stream().anyMatch(AttemptRecord::mayHaveReachedServer);
  }
}
