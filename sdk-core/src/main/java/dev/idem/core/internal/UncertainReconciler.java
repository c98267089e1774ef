package dev.idem.core.internal;

import dev.idem.core.IdempotencyException;
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
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pass of {@code IdempotentExecutor.reconcileUncertain}. A settled operation is written with
 * {@code Journal.settleIfUnchanged}: one conditional write from UNCERTAIN to the state the
 * reconciler found, sending nothing. It never passes through PENDING (or IN_FLIGHT), where another
 * executor's resume, or a restart after a crash between two writes, would send it again: the
 * reconciler is typically asked long after the attempt, past the server's key retention, and a
 * SUCCEEDED answer then means a resend is a second effect. The write is conditional because passes
 * may overlap (two executors, or several instances on one journal, each reconciling on a
 * schedule): an operation one pass settled after another listed it is left to the first, not
 * settled (and its outcome handed over) again.
 *
 * <p>The executor's close waits for a pass in progress (the app closes its journal next), so a pass
 * stops before the next operation once the executor is closed, rather than hold close for its grace
 * and then write a closed journal.
 */
public final class UncertainReconciler {
  private static final Logger LOG = LoggerFactory.getLogger(UncertainReconciler.class);
  private static final int PAGE = 100;

  private final EngineSettings settings;
  private final BooleanSupplier closed;

  /** @param closed whether the executor was closed: the pass then stops before the next operation */
  public UncertainReconciler(EngineSettings settings, BooleanSupplier closed) {
    this.settings = settings;
    this.closed = closed;
  }

  /**
   * Asks {@code reconciler} about every UNCERTAIN operation; returns how many were settled.
   *
   * @throws IllegalStateException if the executor was closed during the pass; the operations not
   *     yet settled stay UNCERTAIN
   */
  public int reconcile(Reconciler reconciler) throws IdempotencyException {
    int settled = 0;
    OperationId after = null;
    while (true) {
      List<OperationRecord> page = settings.journal().findByState(OperationState.UNCERTAIN, after, PAGE);
      if (page.isEmpty()) {
        return settled;  // only an empty page is the last: a journal may return short ones
      }
      for (OperationRecord record : page) {
        checkOpen(settled);
        if (settle(record, reconciler, settled)) {
          settled++;
        }
      }
      after = page.get(page.size() - 1).id();
    }
  }

  private void checkOpen(int settled) {
    if (closed.getAsBoolean()) {
      throw new IllegalStateException("this IdempotentExecutor was closed (close() was called) during"
          + " reconcileUncertain, after " + settled + " operations were settled; the others stay UNCERTAIN"
          + " for the next reconciliation");
    }
  }

  private boolean settle(OperationRecord record, Reconciler reconciler, int settled) throws IdempotencyException {
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
    checkOpen(settled);  // closed while the reconciler was asked: nothing written for this one
    Instant now = settings.clock().instant();
    // Only if still as listed (UNCERTAIN, same generation), checked and settled in one write: an
    // overlapping pass (another executor, or another instance on the same journal), or an operator,
    // may have settled or re-driven it while its reconciler was asked, and the answer is about the
    // attempts listed, not about one sent since.
    Optional<OperationRecord> written = settings.journal().settleIfUnchanged(record, settings.owner(),
        settings.leaseFor(), settings.secrets().persistable(Transition.finish(r.settledAs(), now,
            r.response() != null ? r.response() : record.response(), "reconciled: " + r.reason())));
    if (written.isEmpty()) {
      LOG.info("{} is no longer UNCERTAIN at generation {}, as it was listed for reconciliation (another pass or"
          + " an operator settled or re-drove it, or it left the journal); its reconciler's answer is not written",
          record.id(), record.generation());
      return false;
    }
    return true;
  }
}
