package dev.idem.core;

import static dev.idem.core.support.JournalOps.executor;
import static dev.idem.core.support.JournalOps.finish;
import static dev.idem.core.support.JournalOps.id;
import static dev.idem.core.support.JournalOps.refinish;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.Reconciliation;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.JournalOps;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The order in which {@link InMemoryJournal}'s size bound drops finished operations, and what it meets. */
class InMemoryJournalDropOrderTest {




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
        + weight("t1", OperationState.UNCERTAIN)
        + 200; // room for u2's reconciled record, heavier by its reason, so that it is kept to be read
    InMemoryJournal journal = new InMemoryJournal(bound);
    finish(journal, "u1", OperationState.UNCERTAIN);
    finish(journal, "u2", OperationState.UNCERTAIN);
    VirtualTime time = new VirtualTime();
    IdempotentExecutor idem = executor(journal, time, "p1");
    List<OperationId> asked = new ArrayList<>();

    Throwable thrown = null;
    int settled = -1;
    try {
      settled = idem.reconcileUncertain(record -> {
        asked.add(record.id());
        if (record.id().equals(id("u1"))) {
          // The app's traffic while the provider is asked about u1: two calls end UNCERTAIN (the
          // outage goes on), and the bound drops the oldest UNCERTAIN one, u1 (the journal drops
          // SUCCEEDED and FAILED ones first, but none is left).
          finish(journal, "t1", OperationState.UNCERTAIN);
          finish(journal, "t2", OperationState.UNCERTAIN);
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

  /**
   * An outage ends calls UNCERTAIN while others keep succeeding: past the bound, the successes go
   * first, and the UNCERTAIN operations stay for the app to reconcile, older than all of them.
   */
  @Test
  void successesAreDroppedBeforeUncertainOperationsThatFinishedEarlier() throws Exception {
    long bound = weight("u1", OperationState.UNCERTAIN) + weight("s1", OperationState.SUCCEEDED)
        + weight("f1", OperationState.FAILED);
    InMemoryJournal journal = new InMemoryJournal(bound);
    finish(journal, "u1", OperationState.UNCERTAIN);
    finish(journal, "s1", OperationState.SUCCEEDED);
    finish(journal, "f1", OperationState.FAILED);
    finish(journal, "s2", OperationState.SUCCEEDED);
    finish(journal, "s3", OperationState.SUCCEEDED);

    assertTrue(journal.find(id("u1")).isPresent(), "the UNCERTAIN operation awaits reconciliation");
    assertEquals(List.of(id("u1")), journal.findByState(OperationState.UNCERTAIN, null, 10).stream()
        .map(OperationRecord::id).toList());
    assertFalse(journal.find(id("s1")).isPresent(), "the oldest success goes first");
    assertFalse(journal.find(id("f1")).isPresent(), "then the oldest failure");
    assertTrue(journal.find(id("s3")).isPresent());

    // Only UNCERTAIN ones left over the bound: they go too, oldest first.
    InMemoryJournal onlyUncertain = new InMemoryJournal(weight("u1", OperationState.UNCERTAIN));
    finish(onlyUncertain, "u1", OperationState.UNCERTAIN);
    finish(onlyUncertain, "u2", OperationState.UNCERTAIN);
    assertFalse(onlyUncertain.find(id("u1")).isPresent(), "the bound holds for UNCERTAIN ones too");
    assertTrue(onlyUncertain.find(id("u2")).isPresent());
  }

  /**
   * The class Javadoc: past the bound "the ones that finished first are dropped". An operator
   * re-drives an UNCERTAIN operation and it finishes again; the journal keeps its first place in the
   * drop order, so the very next finish drops the operation just re-driven and settled (the one the
   * operator is about to look at) instead of the older ones.
   */
  @Test
  void aReDrivenOperationThatFinishesAgainIsNotDroppedBeforeOperationsThatFinishedEarlier() throws Exception {
    // What the operations weigh as they end up: a re-driven a with two attempts, c and d with one.
    InMemoryJournal probe = new InMemoryJournal();
    finish(probe, "a", OperationState.UNCERTAIN);
    refinish(probe, "a", 2, OperationState.SUCCEEDED);
    long bound = InMemoryJournal.weight(probe.find(id("a")).orElseThrow()) + weight("c", OperationState.SUCCEEDED)
        + weight("d", OperationState.SUCCEEDED);

    InMemoryJournal journal = new InMemoryJournal(bound);
    finish(journal, "a", OperationState.UNCERTAIN);
    finish(journal, "b", OperationState.SUCCEEDED);
    finish(journal, "c", OperationState.SUCCEEDED);
    refinish(journal, "a", 2, OperationState.SUCCEEDED);
    finish(journal, "d", OperationState.SUCCEEDED);

    assertTrue(journal.find(id("a")).isPresent(), "a finished after b and c (its re-drive settled it), yet it"
        + " was dropped first: it kept the place of its first finish");
    assertFalse(journal.find(id("b")).isPresent(), "b finished first, so it goes first");
  }

  /**
   * The class Javadoc: an UNCERTAIN operation that reconciliation settles "counts as finished then".
   * Settled in one write, it kept its place in the UNCERTAIN drop queue (and its weight as
   * UNCERTAIN): the successes that finished after it were dropped before it, and it would be dropped
   * only with the operations still awaiting reconciliation.
   */
  @Test
  void anOperationSettledByReconciliationIsDroppedAsTheFinishedOperationItBecame() throws Exception {
    Transition failed = Transition.finish(OperationState.FAILED, JournalOps.T0, null, "reconciled: not found");
    InMemoryJournal probe = new InMemoryJournal();
    probe.settleIfUnchanged(finish(probe, "u1", OperationState.UNCERTAIN), "p1", Duration.ofMinutes(1), failed);
    long bound = InMemoryJournal.weight(probe.find(id("u1")).orElseThrow()) + weight("u2", OperationState.UNCERTAIN)
        + weight("s1", OperationState.SUCCEEDED);

    InMemoryJournal journal = new InMemoryJournal(bound);
    OperationRecord u1 = finish(journal, "u1", OperationState.UNCERTAIN);
    finish(journal, "u2", OperationState.UNCERTAIN);
    journal.settleIfUnchanged(u1, "p1", Duration.ofMinutes(1), failed).orElseThrow();
    finish(journal, "s1", OperationState.SUCCEEDED);
    finish(journal, "s2", OperationState.SUCCEEDED);

    assertTrue(journal.find(id("u2")).isPresent(), "u2 awaits reconciliation: the finished ones go first");
    assertFalse(journal.find(id("u1")).isPresent(), "u1, FAILED before s1 succeeded, goes first of the finished");
    assertTrue(journal.find(id("s1")).isPresent(), "s1 finished after u1 was settled, yet it was dropped first:"
        + " the settled u1 kept its place among the UNCERTAIN operations");
  }
}
