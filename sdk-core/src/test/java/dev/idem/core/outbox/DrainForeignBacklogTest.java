package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: the drain check reads the unfinished operations of the registered names only (the names overload of findDue).
 *
 * <p>Review of 4cc7ea00 ("a poll reads the due operations of its registered names only").
 *
 * <p>The commit's fleet.md now says a journal shared with a service whose target is down "costs
 * the other services nothing per poll for that backlog". That holds for the due read only. While a
 * dispatcher drains ({@code shutdown(timeout)}, what a rolling deploy runs), every poll that leaves
 * no delivery running ends with checkDrained, whose hasQueued pages {@code findByState(PENDING)}
 * and then {@code findByState(IN_FLIGHT)} over every name, in identity order, skipping the names it
 * does not register; and while draining every delivery ending wakes a poll. So the other service's
 * queue (here 5,000 "a-refund" operations, which sort ahead of "create-order") is read in full on
 * nearly every poll of the drain: the very cost the commit removed from the due read, left in the
 * other reader of every name. With 100,000 foreign rows on PostgreSQL, every instance of a rolling
 * deploy reads them all per poll until it stops.
 */
class DrainForeignBacklogTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));
  private final AtomicLong stateRowsRead = new AtomicLong();
  private final AtomicLong duePolls = new AtomicLong();
  private final ForwardingJournal counting = new ForwardingJournal(journal) {
    @Override
    public List<OperationRecord> findByState(OperationState state, OperationId after, int limit)
        throws IdempotencyException {
      List<OperationRecord> page = super.findByState(state, after, limit);
      stateRowsRead.addAndGet(page.size());
      return page;
    }

    @Override
    public List<OperationRecord> findDue(java.time.Instant now, String owner, Set<String> names,
        OperationRecord after, int limit) throws IdempotencyException {
      if (after == null) {
        duePolls.incrementAndGet();
      }
      return super.findDue(now, owner, names, after, limit);
    }
  };

  @Test
  void aDrainDoesNotReadEveryPendingOperationOfNamesItDoesNotDeliverOnEachPoll() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(counting).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    int foreign = 5_000;
    for (int i = 0; i < foreign; i++) {
      idem.enqueue(Operation.builder("a-refund", Requests.order("{\"r\":" + i + "}")).build());
    }
    time.advance(Duration.ofSeconds(1));
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build();
    int n = 200;
    List<CompletableFuture<Outcome>> handles = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      handles.add(outbox.submit(Operation.builder("create-order", Requests.order("{\"n\":" + i + "}")).build()));
    }
    outbox.start();
    CompletableFuture<Boolean> drained = outbox.shutdown(Duration.ofMinutes(5));
    time.advance(Duration.ofMinutes(1));

    assertTrue(drained.isDone() && drained.join(), "drained");
    handles.forEach(h -> assertTrue(h.isDone() && !h.isCompletedExceptionally()));
    long perPoll = stateRowsRead.get() / Math.max(1, duePolls.get());
    assertTrue(perPoll <= 10L * 100, "draining " + n + " orders took " + duePolls.get() + " polls whose drain"
        + " checks read " + stateRowsRead.get() + " records by state (" + perPoll + " per poll, pageSize 100):"
        + " every poll of the drain pages through all " + foreign + " PENDING operations of a name this"
        + " dispatcher does not deliver");
  }
}
