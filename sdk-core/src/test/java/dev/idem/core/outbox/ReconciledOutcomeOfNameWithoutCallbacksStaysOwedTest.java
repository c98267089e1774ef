package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.resume.Reconciliation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A review (d32d321c) found that reconcileUncertain owes a settled queued operation's new outcome
 * again (Journal.settleIfUnchanged), with no crash and no failed receipt write, while the docs said
 * an owed outcome of a name registered without callbacks came only from a crash: a Spring-starter
 * app that reconciles while it runs keeps it owed, and kept from purge, for as long as it runs. The
 * docs now name reconciliation (and inline calls) as sources; this test holds the code to them: the
 * dispatcher leaves it owed for a resume handler, purge keeps it, a resumePending with a handler
 * hands it over once, and a purge then deletes it.
 */
class ReconciledOutcomeOfNameWithoutCallbacksStaysOwedTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  @Test
  void aReconciledDeliveryOfANameWithoutCallbacksStaysOwedForAResumeHandlerThenGoes() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).owner("pod-0").clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .leaseFor(Duration.ofMinutes(2)).build();
    Operation op = Operation.builder("untagged-post", Requests.order("{\"n\":1}")).build();
    idem.enqueue(op);
    // The dispatcher's delivery ended UNCERTAIN and its receipt was recorded (no crash, no failed write).
    Lease lease = journal.claim(op.id(), "pod-0", time.now(), Duration.ofMinutes(2)).orElseThrow();
    journal.transition(op.id(), lease, Transition.finish(OperationState.UNCERTAIN, time.now(), null,
        "timeout after the request went out"));
    journal.recordOutcomeDelivered(op.id(), time.now());

    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .pollInterval(Duration.ofSeconds(1))
        .registerAsync("untagged-post", host)  // as the Spring starter registers: no callbacks
        .build().start();
    time.advance(Duration.ofSeconds(1));

    // The operator reconciles while the app runs: the provider holds the charge.
    assertEquals(1, idem.reconcileUncertain(r -> Reconciliation.succeeded(FakeHost.response(200, Map.of()), "the provider holds the charge")));
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());

    for (int i = 0; i < 600; i++) {  // ten minutes of polls, well past the lease
      time.advance(Duration.ofSeconds(1));
    }
    journal.purge(time.now().plus(Duration.ofDays(1)));
    // As the docs say now: a reconciled outcome of a name without callbacks stays owed, for a resume
    // handler; the dispatcher does not take it, and purge keeps it.
    assertTrue(journal.find(op.id()).orElseThrow().outcomeUndelivered(),
        "the reconciled outcome is owed to a resume handler, and purge must keep it");

    // The app's resumePending with a handler for the name hands it over once; then a purge deletes it.
    List<OperationId> told = new ArrayList<>();
    idem.resumePending(Map.of("untagged-post", ResumeHandler.of((request, key) -> {
      throw new AssertionError("a finished operation is not sent again");
    }, outcome -> told.add(op.id()), failure -> { throw new AssertionError(failure); })));
    assertEquals(List.of(op.id()), told, "the resume handler is told of the reconciled outcome once");
    assertFalse(journal.find(op.id()).orElseThrow().outcomeUndelivered());
    journal.purge(time.now().plus(Duration.ofDays(1)));
    assertTrue(journal.find(op.id()).isEmpty(), "once handed over, a purge deletes it");
    outbox.close();
  }
}
