package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.Outcome;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.JournalOps;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Outcomes the journal owes the outbox callbacks of a dispatcher running alone: another owner's
 * (an instance that died and came back under another name) once its terminal write is older than
 * the lease, never while that instance may still be telling its own callbacks.
 */
class OwedOutcomesTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  private Operation succeededUnder(String owner) throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    JournalOps.endedOwed(journal, time, owner, op);
    return op;
  }

  @Test
  void anotherOwnersOwedOutcomeIsHandedOnceAfterTheLeaseAndNotBefore() throws Exception {
    Operation op = succeededUnder("pod-gone");
    List<Outcome> told = new ArrayList<>();
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).owner("pod-new").clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .leaseFor(Duration.ofMinutes(2)).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host, told::add, e -> { }).build().start();

    time.advance(Duration.ofSeconds(90));
    assertEquals(List.of(), told, "within the lease, the instance that wrote it may still be telling its callbacks");
    assertTrue(journal.find(op.id()).orElseThrow().outcomeUndelivered());

    time.advance(Duration.ofMinutes(5));
    assertEquals(1, told.size(), "handed once after the lease: " + told);
    assertTrue(told.get(0).fromJournal());
    assertEquals(op.id(), told.get(0).operationId());
    assertFalse(journal.find(op.id()).orElseThrow().outcomeUndelivered(), "recorded as received");
    assertEquals(0, host.totalAttempts(), "nothing sent");
    outbox.close();
  }

  /**
   * A name this dispatcher delivers without callbacks has no callbacks to tell: its owed outcome
   * (a crash, or a failed receipt write, between the operation's end and the receipt) stays owed,
   * for a resume handler of that name, and is not recorded as received by this dispatcher. Another
   * instance's owed outcome included: the README builds a fleet whose outbox registers
   * create-order without callbacks and whose start-up runs resumePending with a create-order
   * handler, and that handler must be told of what a crash kept from it
   * (ResumeHandlerOwedOutcomeTakenByOutboxTest).
   */
  @Test
  void aDispatcherWithoutCallbacksForTheNameLeavesTheOutcomeOwed() throws Exception {
    Operation own = succeededUnder("pod-0");
    Operation other = succeededUnder("pod-gone");
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).owner("pod-0").clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .leaseFor(Duration.ofMinutes(2)).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build().start();

    time.advance(Duration.ofMinutes(10));  // past the first poll and the lease
    assertTrue(journal.find(own.id()).orElseThrow().outcomeUndelivered(),
        "the earlier incarnation's outcome stays owed, to resumePending's handlers");
    assertTrue(journal.find(other.id()).orElseThrow().outcomeUndelivered(),
        "another owner's outcome stays owed past the lease, to resumePending's handlers");
    assertEquals(0, host.totalAttempts(), "nothing sent");
    outbox.close();
  }
}
