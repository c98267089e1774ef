package dev.idem.core.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.core.spi.Lease;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.resume.Reconciler;
import dev.idem.core.resume.Reconciliation;
import dev.idem.core.spi.Transition;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pass of {@code IdempotentExecutor.reconcileUncertain}. A settled operation goes through
 * re-drive, claim and a fenced transition, so the state machine's rules hold even here.
 */
public final class UncertainReconciler {
  private static final Logger LOG = LoggerFactory.getLogger(UncertainReconciler.class);
  private static final int PAGE = 100;

  private final EngineSettings settings;

  public UncertainReconciler(EngineSettings settings) {
    this.settings = settings;
  }

  /** Asks {@code reconciler} about every UNCERTAIN operation; returns how many were settled. */
  public int reconcile(Reconciler reconciler) throws IdempotencyException {
    int settled = 0;
    OperationId after = null;
    while (true) {
      List<OperationRecord> page = settings.journal().findByState(OperationState.UNCERTAIN, after, PAGE);
      for (OperationRecord record : page) {
        if (settle(record, reconciler)) {
          settled++;
        }
      }
      if (page.size() < PAGE) {
        return settled;
      }
      after = page.get(page.size() - 1).id();
    }
  }

  private boolean settle(OperationRecord record, Reconciler reconciler) throws IdempotencyException {
    Reconciliation r;
    try {
      r = reconciler.reconcile(record);
    } catch (IOException | RuntimeException e) {
      LOG.warn("could not reconcile {}: {}", record.id(), e.toString());
      return false;
    }
    if (r == null || r.settledAs() == OperationState.UNCERTAIN) {
      return false;
    }
    Instant now = settings.clock().instant();
    settings.journal().redrive(record.id(), now);
    Optional<Lease> lease = Claims.claim(settings.journal(), record.id(), settings.owner(), now, settings.leaseFor());
    if (lease.isEmpty()) {
      return false;
    }
    settings.journal().transition(record.id(), lease.get(), Transition.finish(r.settledAs(), now,
        r.response() != null ? r.response() : record.response(), "reconciled: " + r.reason()));
    return true;
  }
}
