package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.support.FakeHost;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * An outbox awaiter (a handle, or the registration's callbacks) that receives an operation's outcome
 * is recorded in the journal as having received it, so that a restart's resumePending does not hand
 * the same outcome to a resume handler again (issue 24).
 */
class OutboxOutcomeDeliveryTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  private IdempotentExecutor executor(String owner) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).scheduler(time.scheduler())
        .sleeper(time.sleeper()).random(() -> 0.5).owner(owner).build();
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  private OperationRecord record(Operation op) throws Exception {
    return journal.find(op.id()).orElseThrow();
  }

  /** What a restarted process's resumePending hands its handler. */
  private List<Object> resumeAfterRestart() throws Exception {
    List<Object> told = new ArrayList<>();
    ResumeSummary s = executor("restarted").resumePending(Map.of("create-order",
        ResumeHandler.of(host, told::add, told::add)));
    assertEquals(told.size(), s.examined(), s.toString());
    return told;
  }

  @Test
  void whatTheDispatcherDeliveredIsNotHandedToAResumeHandlerAfterARestart() throws Exception {
    List<Outcome> callbacks = new ArrayList<>();
    OutboxDispatcher outbox = OutboxDispatcher.builder(executor("p1")).clock(time.clock())
        .scheduler(time.scheduler()).registerAsync("create-order", host, callbacks::add, e -> { }).build().start();
    List<CompletableFuture<Outcome>> handles = new ArrayList<>();
    List<Operation> ops = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      ops.add(order(i));
      handles.add(outbox.submit(ops.get(i)));
    }
    time.advance(Duration.ZERO);
    outbox.close();

    assertEquals(5, callbacks.size());
    for (int i = 0; i < 5; i++) {
      assertTrue(handles.get(i).isDone());
      OperationRecord r = record(ops.get(i));
      assertEquals(OperationState.SUCCEEDED, r.state());
      assertTrue(r.queued(), "a submission is queued");
      assertNotNull(r.outcomeDeliveredAt(), "the dispatcher recorded that it delivered the outcome");
    }
    assertEquals(List.of(), resumeAfterRestart());
    assertEquals(5, host.totalAttempts(), "nothing sent again");
  }

  @Test
  void awaitingAnOutcomeTheJournalStillOwesTakesItAndTheNextResumeHandsNothing() throws Exception {
    Operation op = order(1);
    IdempotentExecutor first = executor("p1");
    first.enqueue(op);
    // Delivered by a resume whose handler did not take it: the outcome is owed.
    first.resumePending(Map.of("create-order", ResumeHandler.of(host,
        o -> { throw new IllegalStateException("not now"); }, f -> { })));
    assertTrue(record(op).outcomeUndelivered());

    OutboxDispatcher outbox = OutboxDispatcher.builder(executor("p2")).clock(time.clock())
        .scheduler(time.scheduler()).registerAsync("create-order", host).build().start();
    CompletableFuture<Outcome> handle = outbox.await(op.id());
    outbox.close();

    assertTrue(handle.isDone());
    assertEquals(op.key(), handle.get().key());
    assertFalse(record(op).outcomeUndelivered(), "the awaiter took it");
    assertEquals(List.of(), resumeAfterRestart());
    assertEquals(1, host.attempts(op.key()));
  }

  /**
   * The handle is completed by the sweep, but its dispatcher does not deliver the name: whoever does
   * (a resume handler here, or another instance's callbacks, which this one cannot know of) is the
   * recipient, so the outcome stays owed to it.
   */
  @Test
  void aHandleCompletedByTheSweepForANameNotRegisteredHereLeavesTheOutcomeOwed() throws Exception {
    Operation op = order(2);
    IdempotentExecutor other = executor("other");
    other.enqueue(op);
    // A dispatcher with no transport for the name: the handle can only be completed by the sweep.
    OutboxDispatcher outbox = OutboxDispatcher.builder(executor("p2")).clock(time.clock())
        .scheduler(time.scheduler()).registerAsync("refund", host).build().start();
    CompletableFuture<Outcome> handle = outbox.await(op.id());
    other.resumePending(Map.of("create-order", ResumeHandler.of(host,
        o -> { throw new IllegalStateException("not now"); }, f -> { })));
    assertNull(record(op).outcomeDeliveredAt());

    time.advance(Duration.ofSeconds(5));
    outbox.close();

    assertTrue(handle.isDone());
    assertEquals(op.key(), handle.get().key());
    assertNull(record(op).outcomeDeliveredAt(), "the handle of a name not registered here records nothing");
    assertEquals(1, resumeAfterRestart().size(), "the resume handler still gets it");
  }
}
