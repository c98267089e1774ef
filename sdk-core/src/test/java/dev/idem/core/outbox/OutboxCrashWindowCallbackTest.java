package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
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
 * The dispatcher alone (docs/fleet.md "The dispatcher alone is enough"; docs/spring.md: resumePending
 * "not run: the outbox alone delivers everything"). The process died after its delivery's SUCCEEDED
 * was journaled and before the success callback ran: the outcome is owed (outcome_delivered_at is
 * empty). README: "the journal records each one a handler received, so ... the next resumePending
 * hands over any that a crash kept from you"; only a repeat is allowed, never a loss. With the
 * dispatcher alone, nothing ever hands it over.
 */
class OutboxCrashWindowCallbackTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  @Test
  void anOutcomeACrashKeptFromTheCallbacksReachesThemAfterTheRestart() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    // The first incarnation: submitted, claimed, sent, answered 201, SUCCEEDED journaled; then kill -9.
    IdempotentExecutor dead = IdempotentExecutor.builder().journal(journal).owner("pod-0").clock(time.clock()).build();
    dead.enqueue(op);
    Lease lease = journal.claim(op.id(), "pod-0", time.now(), Duration.ofMinutes(2)).orElseThrow();
    journal.transition(op.id(), lease, Transition.finish(OperationState.SUCCEEDED, time.now(),
        FakeHost.response(201, Map.of()), "201"));
    assertTrue(journal.find(op.id()).orElseThrow().outcomeUndelivered(), "the outcome is owed");

    List<Outcome> told = new ArrayList<>();
    IdempotentExecutor restarted = IdempotentExecutor.builder().journal(journal).owner("pod-0").clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(restarted).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host, told::add, e -> { }).build().start();
    time.advance(Duration.ofMinutes(10));

    assertEquals(0, host.totalAttempts(), "nothing sent again");
    assertEquals(1, told.size(), "the SUCCEEDED outcome the crash kept from onSuccess is never handed to it by"
        + " the restarted dispatcher; the journal still owes it: "
        + journal.find(op.id()).orElseThrow().outcomeUndelivered());
    outbox.close();
  }
}
