package dev.idem.core;

import static dev.idem.core.support.JournalOps.T0;
import static dev.idem.core.support.JournalOps.attempt;
import static dev.idem.core.support.JournalOps.executor;
import static dev.idem.core.support.JournalOps.op;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.Reconciliation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * reconcileUncertain settles an operation the app's reconciler judged, typically hours later and
 * past the server's key retention: "SUCCEEDED" then means the server has the effect but no longer
 * remembers the key, so one more send of it is a second effect. No write of the settlement may
 * leave the operation where a resume would send it: not while another executor (another instance
 * of a fleet, or the app's own resume beside the reconciliation) resumes the same journal, and not
 * after a crash right after any of its writes.
 *
 * <p>Found by a review: the settlement was a re-drive (UNCERTAIN to PENDING, due now), then a
 * claim, then the finishing transition, and the PENDING operation between the first two was sent
 * again by whichever resume came by.
 */
class ReconcileWhileOthersResumeTest {
  private static final ResponseSnapshot PROOF = ScriptedTransport.response(200, Map.of(), "{\"order\":\"ord_1\"}");

  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  /** The server: every request it receives is counted; none is expected. */
  private final ScriptedTransport server = new ScriptedTransport(time).otherwise(ScriptedTransport.status(201));
  private final List<String> outcomes = new ArrayList<>();
  private final Map<String, ResumeHandler> handlers = Map.of("create-order", ResumeHandler.of(server,
      o -> outcomes.add("succeeded"), f -> outcomes.add("failed: " + f.getMessage())));

  /** The journal writes the reconciling executor made, by method name. */
  private final List<String> writes = new ArrayList<>();

  /**
   * The reconciling executor's journal: after each of its writes, {@code afterWrite} runs (another
   * executor's resume, or the crash of this process).
   */
  private Journal observed(Runnable afterWrite) {
    return new ForwardingJournal(journal) {
      @Override
      public Optional<OperationRecord> redriveIfUnchanged(OperationRecord asRead, Instant now)
          throws IdempotencyException {
        return wrote("redriveIfUnchanged", super.redriveIfUnchanged(asRead, now), afterWrite);
      }

      @Override
      public Optional<OperationRecord> settleIfUnchanged(OperationRecord asRead, String owner, Duration leaseFor,
          Transition settlement) throws IdempotencyException {
        return wrote("settleIfUnchanged", super.settleIfUnchanged(asRead, owner, leaseFor, settlement), afterWrite);
      }

      @Override
      public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
          throws IdempotencyException {
        return wrote("claim", super.claim(id, owner, now, leaseFor), afterWrite);
      }

      @Override
      public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
        wrote("recordAttempt", null, afterWrite);
        super.recordAttempt(id, lease, attempt);
      }

      @Override
      public OperationRecord transition(OperationId id, Lease lease, Transition t) throws IdempotencyException {
        return wrote("transition", super.transition(id, lease, t), afterWrite);
      }
    };
  }

  private <T> T wrote(String what, T result, Runnable afterWrite) {
    writes.add(what);
    afterWrite.run();
    return result;
  }

  /** An operation sent once, whose request went out and whose answer was lost: UNCERTAIN. */
  private OperationRecord uncertain(boolean queued) throws IdempotencyException {
    NewOperation o = op("u1", queued);
    journal.begin(o);
    Lease lease = journal.claim(o.id(), "p0", T0, Duration.ofMinutes(1)).orElseThrow();
    journal.recordAttemptAndTransition(o.id(), lease, attempt(1, lease, OperationState.UNCERTAIN),
        Transition.finish(OperationState.UNCERTAIN, T0, null, "timeout after the request went out"));
    return journal.find(o.id()).orElseThrow();
  }

  private static Reconciliation answer(OperationState settledAs) {
    return settledAs == OperationState.SUCCEEDED
        ? Reconciliation.succeeded(PROOF, "GET /orders?ref=1 found ord_1")
        : Reconciliation.failed("GET /orders?ref=1 found nothing");
  }

  @ParameterizedTest(name = "{0}, queued {1}")
  @CsvSource({"SUCCEEDED, true", "SUCCEEDED, false", "FAILED, true", "FAILED, false"})
  void anotherExecutorResumingDuringTheSettlementSendsNothing(OperationState settledAs, boolean queued)
      throws Exception {
    OperationRecord listed = uncertain(queued);
    IdempotentExecutor other = executor(journal, time, "instance-b");
    IdempotentExecutor reconciling = executor(observed(() -> {
      try {
        other.resumePending(handlers);
      } catch (IdempotencyException e) {
        throw new AssertionError(e);
      }
    }), time, "instance-a");

    int settled = reconciling.reconcileUncertain(r -> answer(settledAs));

    assertEquals(List.of(), server.sent().stream().map(s -> s.key().value()).toList(),
        "the server received the operation again while it was being settled as " + settledAs + " (writes: "
            + writes + "): a resume of instance-b found it PENDING between the settlement's writes and sent it;"
            + " past the key's retention that is a second effect");
    assertEquals(1, settled);
    OperationRecord after = journal.find(listed.id()).orElseThrow();
    assertEquals(settledAs, after.state(), "the reconciler's answer is what the journal keeps");
    assertTrue(after.reason().startsWith("reconciled: "), after.reason());
    if (settledAs == OperationState.SUCCEEDED) {
      assertEquals(PROOF, after.response());
    }
    assertEquals(listed.attempts(), after.attempts(), "no attempt was made or recorded for it");
  }

  /** The process dies right after the settlement's n-th write; a restart resumes the journal. */
  @ParameterizedTest(name = "{0}, crash after write {1}")
  @CsvSource({"SUCCEEDED, 1", "SUCCEEDED, 2", "SUCCEEDED, 3", "FAILED, 1", "FAILED, 2", "FAILED, 3"})
  void aCrashAfterAnyWriteOfTheSettlementLeavesNothingToSend(OperationState settledAs, int crashAfter)
      throws Exception {
    OperationRecord listed = uncertain(true);
    IdempotentExecutor dying = executor(observed(() -> {
      if (writes.size() == crashAfter) {
        throw new ProcessDied();
      }
    }), time, "instance-a");
    try {
      dying.reconcileUncertain(r -> answer(settledAs));
    } catch (ProcessDied expected) {
      // the settlement made fewer writes than crashAfter, or died after write crashAfter
    }

    IdempotentExecutor restarted = executor(journal, time, "instance-a");
    restarted.resumePending(handlers);

    assertEquals(0, server.count(), "after a crash right after write " + crashAfter + " of " + writes
        + ", the restart sent the operation the reconciler had judged " + settledAs);
    OperationState state = journal.find(listed.id()).orElseThrow().state();
    assertTrue(Set.of(OperationState.UNCERTAIN, settledAs).contains(state),
        "left " + state + ": either still UNCERTAIN (nothing written) or settled as the reconciler said");
  }

  /** The death of the reconciling process, thrown out of its journal write. */
  private static final class ProcessDied extends RuntimeException {
    ProcessDied() {
      super("the process died here", null, false, false);
    }
  }
}
