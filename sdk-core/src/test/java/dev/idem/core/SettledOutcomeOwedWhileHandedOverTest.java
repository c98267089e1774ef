package dev.idem.core;

import static dev.idem.core.support.JournalOps.T0;
import static dev.idem.core.support.JournalOps.attempt;
import static dev.idem.core.support.JournalOps.executor;
import static dev.idem.core.support.JournalOps.op;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.Reconciliation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A queued operation ends UNCERTAIN and its outcome is owed to its resume handler. One instance's
 * resumePending hands that UNCERTAIN outcome over; while the handler runs, another instance's
 * reconcileUncertain settles the operation as SUCCEEDED ({@code settleIfUnchanged} clears the
 * delivery mark: "a queued operation's new outcome is owed to its handler"). The first instance
 * then records the delivery of what it handed over, with {@code recordOutcomeDelivered(id, at)},
 * which names no state or generation, so it marks the SUCCEEDED outcome delivered: the handler never
 * hears that the operation succeeded, on this pass, on the next, or after a restart.
 */
class SettledOutcomeOwedWhileHandedOverTest {
  private static final ResponseSnapshot PROOF = ScriptedTransport.response(200, Map.of(), "{\"order\":\"ord_1\"}");

  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final ScriptedTransport server = new ScriptedTransport(time).otherwise(ScriptedTransport.status(201));
  private final List<String> handed = new ArrayList<>();

  @Test
  void theSettledSuccessIsStillHandedToTheHandler() throws Exception {
    NewOperation o = op("u1", true);
    journal.begin(o);
    Lease lease = journal.claim(o.id(), "p0", T0, Duration.ofMinutes(1)).orElseThrow();
    journal.recordAttemptAndTransition(o.id(), lease, attempt(1, lease, OperationState.UNCERTAIN),
        Transition.finish(OperationState.UNCERTAIN, T0, null, "timeout after the request went out"));
    assertTrue(journal.find(o.id()).orElseThrow().outcomeUndelivered(), "precondition: the UNCERTAIN outcome is owed");

    IdempotentExecutor reconciling = executor(journal, time, "instance-b");
    IdempotentExecutor resuming = executor(journal, time, "instance-a");
    Map<String, ResumeHandler> handlers = Map.of("create-order", ResumeHandler.of(server,
        outcome -> handed.add("succeeded"),
        failure -> {
          handed.add(failure.getClass().getSimpleName());
          if (handed.size() == 1) {
            // Instance B reconciles while instance A's handler is busy with the UNCERTAIN outcome.
            try {
              assertEquals(1, reconciling.reconcileUncertain(r -> Reconciliation.succeeded(PROOF, "found ord_1")));
            } catch (IdempotencyException e) {
              throw new AssertionError(e);
            }
          }
        }));

    resuming.resumePending(handlers);
    OperationRecord after = journal.find(o.id()).orElseThrow();
    assertEquals(OperationState.SUCCEEDED, after.state(), "precondition: reconciliation settled it");
    resuming.resumePending(handlers); // the next pass, or a restart's: hands what is still owed

    assertEquals(0, server.count(), "nothing is sent for a settled operation");
    assertEquals(List.of("OperationUncertainException", "succeeded"), handed,
        "the handler got the UNCERTAIN outcome, then never the SUCCEEDED one reconciliation settled: the"
            + " delivery recorded for the UNCERTAIN outcome marked the new one delivered (outcomeDeliveredAt "
            + after.outcomeDeliveredAt() + " on the SUCCEEDED record)");
  }
}
