package dev.idem.core.spi;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A {@link Journal} that forwards every call to another one. Extend it to observe or change a few
 * calls (count them, time them, fail them in a test) without re-implementing the rest.
 * {@link #recordAttemptAndTransition} is not forwarded as one call: it runs this class's
 * {@link #recordAttempt} and {@link #transition}, so that a subclass overriding those two sees
 * every attempt and every transition (override it too, to hand the delegate the single write).
 * Nor is {@link #beginAndClaim}: it runs this class's {@link #begin} and {@link #claim}. Nor is
 * {@link #claimWaiting} (the claim of an operation an app's call named): it runs this class's
 * {@link #claim}, so that a subclass overriding {@link #claim} sees every claim; the delegate's own
 * brief wait for a row another process holds is then not made (override {@link #claimWaiting} to
 * forward it: {@code delegate().claimWaiting(...)}).
 * Nor are {@link #claimAll} and {@link #claimIfUnchanged}: the SPI's defaults run this class's
 * {@link #find} and {@link #claim} for each operation, where the delegate fences each claim in one
 * step (override them to forward: {@code delegate().claimIfUnchanged(...)}).
 * Nor is the names overload of {@code findDue} (what an outbox dispatcher reads): the SPI's default
 * runs this class's {@link #findDue(Instant, String, OperationRecord, int)} and keeps the names
 * asked for, so that a subclass overriding that method still sees (and may change) every due read;
 * the delegate's own filter, in its query, is then not used (override it to forward:
 * {@code delegate().findDue(now, owner, names, after, limit)}). Nor, for the same reason, is the
 * names overload of {@code findByState} (what the drain check of an outbox dispatcher's
 * {@code shutdown(timeout)} reads): the SPI's default runs this class's
 * {@link #findByState(OperationState, OperationId, int)} and keeps the names asked for (override
 * it to forward: {@code delegate().findByState(state, names, after, limit)}).
 * {@link #redriveIfUnchanged} and {@link #settleIfUnchanged} are forwarded as one call each,
 * because each must stay one atomic step in the delegate: a subclass overriding {@link #redrive},
 * {@link #claim} or {@link #transition} does not see them (override them too).
 *
 * <p>As thread-safe as the delegate and the overriding methods.
 */
public abstract class ForwardingJournal implements Journal {
  private final Journal delegate;

  /**
   * Creates a journal that forwards to {@code delegate}.
   *
   * @param delegate the journal that does the work
   * @throws NullPointerException if {@code delegate} is null
   */
  protected ForwardingJournal(Journal delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /**
   * The journal calls are forwarded to.
   *
   * @return the delegate given to the constructor
   */
  protected Journal delegate() {
    return delegate;
  }

  @Override
  public BeginResult begin(NewOperation operation) throws IdempotencyException {
    return delegate.begin(operation);
  }

  @Override
  public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
    return delegate.find(id);
  }

  @Override
  public List<OperationRecord> findByReference(String scope, String reference) throws IdempotencyException {
    return delegate.findByReference(scope, reference);
  }

  @Override
  public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    return delegate.claim(id, owner, now, leaseFor);
  }

  @Override
  public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
    delegate.recordAttempt(id, lease, attempt);
  }

  @Override
  public OperationRecord transition(OperationId id, Lease lease, Transition transition) throws IdempotencyException {
    return delegate.transition(id, lease, transition);
  }

  @Override
  public OperationRecord abandon(OperationId id, Transition transition) throws IdempotencyException {
    return delegate.abandon(id, transition);
  }

  @Override
  public OperationRecord redrive(OperationId id, Instant now) throws IdempotencyException {
    return delegate.redrive(id, now);
  }

  @Override
  public Optional<OperationRecord> redriveIfUnchanged(OperationRecord asRead, Instant now)
      throws IdempotencyException {
    return delegate.redriveIfUnchanged(asRead, now);
  }

  @Override
  public Optional<OperationRecord> settleIfUnchanged(OperationRecord asRead, String owner, Duration leaseFor,
      Transition settlement) throws IdempotencyException {
    return delegate.settleIfUnchanged(asRead, owner, leaseFor, settlement);
  }

  @Override
  public boolean recordOutcomeDelivered(OperationId id, Instant at) throws IdempotencyException {
    return delegate.recordOutcomeDelivered(id, at);
  }

  @Override
  public int recordOutcomesDelivered(List<OperationId> ids, Instant at) throws IdempotencyException {
    return delegate.recordOutcomesDelivered(ids, at);
  }

  @Override
  public List<OperationRecord> findUndelivered(OperationId after, int limit) throws IdempotencyException {
    return delegate.findUndelivered(after, limit);
  }

  @Override
  public List<OperationRecord> findDue(Instant now, OperationId after, int limit) throws IdempotencyException {
    return delegate.findDue(now, after, limit);
  }

  @Override
  public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
      throws IdempotencyException {
    return delegate.findDue(now, owner, after, limit);
  }

  @Override
  public List<OperationRecord> findByState(OperationState state, OperationId after, int limit)
      throws IdempotencyException {
    return delegate.findByState(state, after, limit);
  }

  @Override
  public long count(OperationState state) throws IdempotencyException {
    return delegate.count(state);
  }

  @Override
  public Optional<Instant> oldestCreatedAt(OperationState state) throws IdempotencyException {
    return delegate.oldestCreatedAt(state);
  }

  @Override
  public int purge(Instant before) throws IdempotencyException {
    return delegate.purge(before);
  }

  @Override
  public void close() throws IdempotencyException {
    delegate.close();
  }
}
