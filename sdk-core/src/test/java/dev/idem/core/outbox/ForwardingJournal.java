package dev.idem.core.outbox;

import dev.idem.core.AttemptRecord;
import dev.idem.core.BeginResult;
import dev.idem.core.IdempotencyException;
import dev.idem.core.Journal;
import dev.idem.core.Lease;
import dev.idem.core.NewOperation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Transition;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** A journal that forwards every call, for tests that count or break some of them. */
class ForwardingJournal implements Journal {
  private final Journal delegate;

  ForwardingJournal(Journal delegate) {
    this.delegate = delegate;
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
  public List<OperationRecord> findDue(Instant now, OperationId after, int limit) throws IdempotencyException {
    return delegate.findDue(now, after, limit);
  }

  @Override
  public List<OperationRecord> findByState(OperationState state, OperationId after, int limit)
      throws IdempotencyException {
    return delegate.findByState(state, after, limit);
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
