package dev.idem.core;

import static dev.idem.core.support.JournalOps.T0;
import static dev.idem.core.support.JournalOps.attempt;
import static dev.idem.core.support.JournalOps.executor;
import static dev.idem.core.support.JournalOps.op;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.resume.Reconciliation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Two reconcileUncertain passes that overlap on one journal (two executors, or two instances of a
 * fleet, each reconciling on a schedule) settle each operation once.
 */
class OverlappingReconcilePassesTest {



  /**
   * reconcileUncertain says an operation "settled by another pass" is passed over, nothing written
   * for it. Two passes overlap: pass A settles a queued UNCERTAIN operation as FAILED and its
   * outcome is handed to the app's handler (a refund, say). Pass B listed it while it was
   * UNCERTAIN; its re-drive of the now FAILED operation succeeds (FAILED may be re-driven), so B
   * settles it again, counts it as settled, and the re-drive clears the delivery mark: the next
   * resume hands the same FAILED outcome to the handler a second time.
   */
  @Test
  void anOperationAnotherPassSettledMeanwhileIsNotSettledAgainNorHandedOverTwice() throws Exception {
    InMemoryJournal journal = new InMemoryJournal();
    VirtualTime time = new VirtualTime();
    NewOperation queued = op("q1", true);
    journal.begin(queued);
    Lease lease = journal.claim(queued.id(), "p0", T0, Duration.ofMinutes(1)).orElseThrow();
    journal.recordAttemptAndTransition(queued.id(), lease, attempt(1, lease, OperationState.UNCERTAIN),
        Transition.finish(OperationState.UNCERTAIN, T0, null, "timeout after the request went out"));

    IdempotentExecutor a = executor(journal, time, "instance-a");
    IdempotentExecutor b = executor(journal, time, "instance-b");
    ScriptedTransport transport = new ScriptedTransport(time).otherwise(ScriptedTransport.status(201));
    List<String> refunds = new ArrayList<>();
    Map<String, ResumeHandler> handlers = Map.of("create-order",
        ResumeHandler.of(transport, o -> { }, failure -> refunds.add(failure.getMessage())));
    int[] settledByA = {-1};
    OperationRecord[] afterA = new OperationRecord[1];

    int settledByB = b.reconcileUncertain(record -> {
      // While instance B asks the provider about q1, instance A's pass settles it, and A's resume
      // hands the FAILED outcome to the handler.
      settledByA[0] = a.reconcileUncertain(r -> Reconciliation.failed("the provider has no such charge"));
      a.resumePending(handlers);
      afterA[0] = journal.find(record.id()).orElseThrow();
      return Reconciliation.failed("the provider has no such charge");
    });
    a.resumePending(handlers);

    assertEquals(1, settledByA[0], "precondition: pass A settled q1");
    assertEquals(OperationState.FAILED, afterA[0].state(), "precondition");
    assertEquals(1, refunds.size(), "the FAILED outcome of q1, settled once, was handed to the handler "
        + refunds.size() + " times: pass B re-drove and settled it again, which cleared its delivery mark");
    assertEquals(0, settledByB, "pass B counts q1 as settled though pass A had settled it");
    assertEquals(afterA[0].generation(), journal.find(queued.id()).orElseThrow().generation(),
        "pass B wrote q1 again (re-drive and claim) after pass A settled it");
  }

  /**
   * The same state is not enough: while pass B asks about an UNCERTAIN operation, an operator
   * re-drives it and a resume sends it again, and it ends UNCERTAIN once more. B's answer was about
   * the attempts it listed, not the one sent since (which may have taken effect): it is not written.
   */
  @Test
  void anOperationSentAgainSinceItWasListedIsNotSettledOnTheOldAnswer() throws Exception {
    InMemoryJournal journal = new InMemoryJournal();
    VirtualTime time = new VirtualTime();
    NewOperation inline = op("i1", false);
    journal.begin(inline);
    Lease first = journal.claim(inline.id(), "p0", T0, Duration.ofMinutes(1)).orElseThrow();
    journal.recordAttemptAndTransition(inline.id(), first, attempt(1, first, OperationState.UNCERTAIN),
        Transition.finish(OperationState.UNCERTAIN, T0, null, "timeout after the request went out"));
    IdempotentExecutor b = executor(journal, time, "instance-b");
    OperationRecord[] sentAgain = new OperationRecord[1];

    int settled = b.reconcileUncertain(record -> {
      journal.redrive(record.id(), T0);
      Lease again = journal.claim(record.id(), "p0", T0, Duration.ofMinutes(1)).orElseThrow();
      journal.recordAttemptAndTransition(record.id(), again, attempt(2, again, OperationState.UNCERTAIN),
          Transition.finish(OperationState.UNCERTAIN, T0, null, "timeout again"));
      sentAgain[0] = journal.find(record.id()).orElseThrow();
      return Reconciliation.failed("the provider has no such charge");
    });

    assertEquals(0, settled);
    assertEquals(sentAgain[0], journal.find(inline.id()).orElseThrow(), "nothing written after the new attempt");
  }

  /** An operation purged (or dropped by a bound) while it was asked about is passed over, and the pass goes on. */
  @Test
  void anOperationGoneSinceItWasListedIsPassedOverAndThePassGoesOn() throws Exception {
    InMemoryJournal journal = new InMemoryJournal();
    VirtualTime time = new VirtualTime();
    List<OperationId> ids = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      NewOperation o = op("g" + i, false);
      journal.begin(o);
      Lease lease = journal.claim(o.id(), "p0", T0, Duration.ofMinutes(1)).orElseThrow();
      // g0 ends UNCERTAIN at T0, g1 a minute later: a purge before T0 + 1 s takes g0 only.
      journal.recordAttemptAndTransition(o.id(), lease, attempt(1, lease, OperationState.UNCERTAIN),
          Transition.finish(OperationState.UNCERTAIN, T0.plusSeconds(60L * i), null, "timeout"));
      ids.add(o.id());
    }
    IdempotentExecutor b = executor(journal, time, "instance-b");

    int settled = b.reconcileUncertain(record -> {
      if (record.id().equals(ids.get(0))) {
        journal.purge(T0.plusSeconds(1)); // UNCERTAIN is terminal: a purge may take it
      }
      return Reconciliation.failed("the provider has no such charge");
    });

    assertEquals(1, settled, "g0 is passed over, g1 settled");
    assertEquals(Optional.empty(), journal.find(ids.get(0)), "not written back after its purge");
    assertEquals(OperationState.FAILED, journal.find(ids.get(1)).orElseThrow().state());
  }
}
