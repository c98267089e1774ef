package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * An outcome the journal owes the outbox callbacks (another instance, pod-a, wrote the terminal
 * state and stopped before telling its callbacks) must reach this instance's callbacks once the
 * lease has passed: register's Javadoc promises "twice, never zero times". A handle on the
 * operation (submit or await of it once terminal, or a delivery that finds it finished) took the
 * outcome and recorded it as received, so OwedOutcomes never handed it to the callbacks.
 */
class OutboxHandleTakesOwedOutcomeTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));
  private final List<String> told = Collections.synchronizedList(new ArrayList<>());
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();

  private IdempotentExecutor executor(String owner, Journal j) {
    return IdempotentExecutor.builder().journal(j).owner(owner).clock(time.clock()).scheduler(time.scheduler())
        .sleeper(time.sleeper()).asyncExecutor(Runnable::run).random(() -> 0.5).leaseFor(Duration.ofMinutes(2))
        .build();
  }

  /** Pod-a delivers the operation and stops before its callback: the outcome is owed. */
  private void deliveredByPodAWhichThenStops() throws Exception {
    IdempotentExecutor podA = executor("pod-a", journal);
    podA.enqueue(op);
    podA.resume(op.id(), host);
    assertTrue(journal.find(op.id()).orElseThrow().outcomeUndelivered());
  }

  private OutboxDispatcher podB(Journal j) {
    return OutboxDispatcher.builder(executor("pod-b", j)).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host, (Outcome o) -> told.add("onSuccess " + o.operationId()),
            e -> told.add("onFailure " + e)).build().start();
  }

  @Test
  void awaitingAnOwedOutcomeLeavesItForTheCallbacks() throws Exception {
    deliveredByPodAWhichThenStops();
    OutboxDispatcher outbox = podB(journal);

    CompletableFuture<Outcome> handle = outbox.await(op.id());
    assertEquals(op.key(), handle.get().key(), "the awaiter gets the outcome");
    time.advance(Duration.ofMinutes(5));

    assertEquals(List.of("onSuccess " + op.id()), told, "owed to the callbacks, recorded as received by the"
        + " await; outcomeUndelivered=" + journal.find(op.id()).orElseThrow().outcomeUndelivered());
    outbox.close();
  }

  @Test
  void submittingAnOperationWhoseOutcomeIsOwedLeavesItForTheCallbacks() throws Exception {
    deliveredByPodAWhichThenStops();
    OutboxDispatcher outbox = podB(journal);

    CompletableFuture<Outcome> handle = outbox.submit(op);
    assertEquals(op.key(), handle.get().key(), "the submitter gets the outcome");
    time.advance(Duration.ofMinutes(5));

    assertEquals(List.of("onSuccess " + op.id()), told, "owed to the callbacks, recorded as received by the"
        + " submit; outcomeUndelivered=" + journal.find(op.id()).orElseThrow().outcomeUndelivered());
    outbox.close();
  }

  @Test
  void aDeliveryThatFindsTheOperationFinishedByAnotherInstanceLeavesItsOutcomeForTheCallbacks() throws Exception {
    IdempotentExecutor podA = executor("pod-a", journal);
    podA.enqueue(op);
    // Pod-a delivers the operation between pod-b's read of the due operations and pod-b's delivery,
    // then stops before telling its callbacks.
    ForwardingJournal seenByB = new ForwardingJournal(journal) {
      private boolean interleaved;

      @Override
      public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
          int limit) throws IdempotencyException {
        List<OperationRecord> page = super.findDue(now, owner, names, after, limit);
        if (!page.isEmpty() && !interleaved) {
          interleaved = true;
          podA.resume(op.id(), host);
        }
        return page;
      }
    };
    OutboxDispatcher outbox = podB(seenByB);
    CompletableFuture<Outcome> handle = outbox.await(op.id());

    time.advance(Duration.ZERO);
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    assertEquals(1, host.attempts(op.key()), "one attempt, by pod-a");
    assertTrue(handle.isDone(), "pod-b's delivery completed the handle");
    assertEquals(List.of(), told, "pod-a's ending, not pod-b's to tell within the lease");
    time.advance(Duration.ofMinutes(5));

    assertEquals(List.of("onSuccess " + op.id()), told, "pod-a stopped before its callback; pod-b recorded the"
        + " outcome as received without telling its own; outcomeUndelivered="
        + journal.find(op.id()).orElseThrow().outcomeUndelivered());
    outbox.close();
  }
}
