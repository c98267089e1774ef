package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.resume.Reconciliation;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * README, docs/spring.md, docs/journal.md, docs/fleet.md and register's Javadoc (a525368e): an
 * outcome of a name registered without callbacks that the journal still owes "exists only for an
 * operation that a crash (or a failed receipt write) caught between its end and the receipt: at
 * most the deliveries in flight at the crash", and a purge deletes it once a resumePending at
 * start-up handed it over.
 *
 * <p>But reconcileUncertain re-owes the settled outcome of every queued operation it settles
 * (Journal.settleIfUnchanged: "no delivery recorded (a queued operation's new outcome is owed to
 * its handler)"), with no crash and no failed write. A Spring-starter app (every name registered
 * without callbacks, no resumePending but at start-up) that reconciles its UNCERTAIN deliveries
 * while running therefore keeps every reconciled operation owed, and kept from purge, however long
 * the dispatcher runs: OwedOutcomes passes such outcomes over and no other path records them.
 */
class ReconciledOutcomeOfNameWithoutCallbacksStaysOwedTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  @Test
  void aReconciledDeliveryOfANameWithoutCallbacksIsNotLeftOwedForEver() throws Exception {
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

    assertTrue(journal.find(op.id()).isEmpty() || !journal.find(op.id()).orElseThrow().outcomeUndelivered(),
        "the reconciled outcome of a name registered without callbacks stays owed (and kept from purge) with no"
            + " crash and no failed receipt write, though the docs say such an outcome exists only for the deliveries"
            + " a crash caught");
    outbox.close();
  }
}
