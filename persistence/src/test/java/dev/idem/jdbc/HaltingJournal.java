package dev.idem.jdbc;

import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Transition;

/**
 * A journal that kills its JVM ({@link Runtime#halt}) at a chosen point of one operation: right
 * after its begin returned, or right before its completion is written. For child-JVM kill tests.
 */
final class HaltingJournal extends ForwardingJournal {
  static final int HALT_CODE = 77;

  enum Point { AFTER_BEGIN, BEFORE_COMPLETION, NEVER }

  private final Point point;
  private final IdempotencyKey victim;

  HaltingJournal(Journal delegate, Point point, IdempotencyKey victim) {
    super(delegate);
    this.point = point;
    this.victim = victim;
  }

  @Override
  public BeginResult begin(NewOperation operation) throws IdempotencyException {
    BeginResult r = super.begin(operation);
    if (point == Point.AFTER_BEGIN && operation.id().key().equals(victim)) {
      Runtime.getRuntime().halt(HALT_CODE);
    }
    return r;
  }

  @Override
  public OperationRecord transition(OperationId id, Lease lease, Transition transition) throws IdempotencyException {
    if (point == Point.BEFORE_COMPLETION && id.key().equals(victim) && transition.target() == OperationState.SUCCEEDED) {
      Runtime.getRuntime().halt(HALT_CODE);
    }
    return super.transition(id, lease, transition);
  }
}
