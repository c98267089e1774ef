package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: the not-due check leaves terminal records to settle as before.
 *
 * <p>Review (core2) of 4ffc716d: IdempotentExecutor.resumeAsyncCounted ends a dispatcher's delivery
 * with OperationPendingException ("not due: changed since the due read, it is next due at null")
 * whenever the record changed since the due page and {@code !DueRule.isDueFor(r)}, and isDueFor is
 * false for every terminal state. So an operation another instance of the fleet delivered to
 * SUCCEEDED between this poll's due read and this delivery is reported PENDING, not as the
 * terminal outcome it is (before the commit runAsync found it terminal and ended the delivery with
 * the journal's outcome). Consequences: the delivery's ending is not terminal and not progress, so a
 * poll whose deliveries all raced this way counts as "no progress" and takes the dispatcher offline
 * (docs/offline.md: the interval doubles, one WARN, new submissions wait for the backed-off poll,
 * health shows the outbox offline) though the target answered every request; and the handle waits
 * for a later sweep instead of completing with the delivery.
 *
 * <p>Deterministic: pod B's delivery runs between pod A's due read and pod A's delivery.
 */
class FleetEndedElsewhereTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  private IdempotentExecutor.Builder executor(Journal j, String owner) {
    return IdempotentExecutor.builder().journal(j).owner(owner).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5);
  }

  @Test
  void aDeliveryOfAnOperationAnotherInstanceEndedSinceTheDueReadEndsWithThatOutcomeNotPending() throws Exception {
    IdempotentExecutor podB = executor(journal, "pod-b").build();
    AtomicBoolean raced = new AtomicBoolean();
    Journal podAsView = new ForwardingJournal(journal) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
          int limit) throws IdempotencyException {
        List<OperationRecord> page = super.findDue(now, owner, names, after, limit);
        if (!page.isEmpty() && raced.compareAndSet(false, true)) {
          podB.resumeAsync(page.get(0).id(), host);  // pod B delivers it first: SUCCEEDED
        }
        return page;
      }
    };
    IdempotentExecutor podA = executor(podAsView, "pod-a").build();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    podA.enqueue(op);

    OutboxDispatcher outboxA = OutboxDispatcher.builder(podA).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build();
    CompletableFuture<Outcome> handle = outboxA.await(op.id());
    outboxA.start();
    time.advance(Duration.ZERO);

    assertTrue(raced.get(), "pod B delivered between pod A's due read and its delivery");
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    assertEquals(1, host.totalAttempts(), "sent once, by pod B");
    assertFalse(outboxA.isOffline(), "pod A's poll found an operation the fleet delivered with success, yet the"
        + " dispatcher went offline as for an unreachable target (interval " + outboxA.currentPollInterval() + ")");
    assertTrue(handle.isDone() && !handle.isCompletedExceptionally(), "the delivery found the operation SUCCEEDED:"
        + " its handle completes with it (" + handle + ")");
    outboxA.close();
  }
}
