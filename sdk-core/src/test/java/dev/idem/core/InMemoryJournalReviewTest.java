package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.resume.Reconciliation;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Review findings on {@link InMemoryJournal}'s size bound (drops) racing re-drives. */
class InMemoryJournalReviewTest {
  private static final Instant T0 = Instant.parse("2026-11-02T10:00:00Z");

  private static NewOperation op(String key) {
    RequestSnapshot req = Requests.order("{\"k\":\"" + key + "\"}");
    return new NewOperation(new OperationId("tenant", "create-order", IdempotencyKey.of(key)), null,
        Fingerprinter.defaults().fingerprint(req), req, T0, false);
  }

  private static OperationId id(String key) {
    return op(key).id();
  }

  private static AttemptRecord attempt(Lease lease) {
    return new AttemptRecord(1, lease.generation(), T0, T0, Classification.SUCCESS, 201, null, "HTTP 201",
        Duration.ZERO, "test");
  }

  /** Begins, claims and finishes {@code key} in {@code end}; returns its record (null if dropped at once). */
  private static OperationRecord finish(InMemoryJournal journal, String key, OperationState end)
      throws IdempotencyException {
    BeginResult begun = journal.beginAndClaim(op(key), "p1", Duration.ofMinutes(1));
    journal.recordAttemptAndTransition(begun.record().id(), begun.lease(), attempt(begun.lease()),
        Transition.finish(end, T0, ScriptedTransport.response(201, Map.of(), "{}"), null));
    return journal.find(begun.record().id()).orElse(null);
  }

  private static long weight(String key, OperationState end) throws Exception {
    return InMemoryJournal.weight(finish(new InMemoryJournal(), key, end));
  }

  /**
   * An app runs reconcileUncertain (its reconciler asks the payment provider, which takes a while)
   * while its other calls keep finishing. The default journal drops the oldest finished operations
   * past its bound, UNCERTAIN ones included, so the one being reconciled can be dropped between the
   * listing and the re-drive: the whole pass then dies with "no such operation", and the other
   * UNCERTAIN operations are never reconciled. The Javadoc says only a closed executor throws
   * IllegalStateException, and that operations it cannot settle stay UNCERTAIN.
   */
  @Test
  void reconcileUncertainSurvivesAnOperationDroppedWhileItsReconcilerRuns() throws Exception {
    long bound = weight("u1", OperationState.UNCERTAIN) + weight("u2", OperationState.UNCERTAIN)
        + weight("t1", OperationState.SUCCEEDED);
    InMemoryJournal journal = new InMemoryJournal(bound);
    finish(journal, "u1", OperationState.UNCERTAIN);
    finish(journal, "u2", OperationState.UNCERTAIN);
    VirtualTime time = new VirtualTime();
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5).build();
    List<OperationId> asked = new ArrayList<>();

    Throwable thrown = null;
    int settled = -1;
    try {
      settled = idem.reconcileUncertain(record -> {
        asked.add(record.id());
        if (record.id().equals(id("u1"))) {
          // The app's traffic while the provider is asked about u1: two calls finish.
          finish(journal, "t1", OperationState.SUCCEEDED);
          finish(journal, "t2", OperationState.SUCCEEDED);
        }
        return Reconciliation.failed("the provider has no such charge");
      });
    } catch (RuntimeException e) {
      thrown = e;
    }

    assertTrue(journal.find(id("u2")).isPresent(), "precondition: only u1 was dropped by the bound");
    assertEquals(null, thrown, "reconcileUncertain threw " + thrown + " because u1 was dropped while its"
        + " reconciler ran; u2 was never reconciled");
    assertEquals(List.of(id("u1"), id("u2")), asked, "every UNCERTAIN operation is asked about");
    assertEquals(OperationState.FAILED, journal.find(id("u2")).orElseThrow().state());
    assertEquals(1, settled);
  }
}
