package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: a dispatcher reads
 * the due operations of the names it registers only ({@code Journal.findDue} with names).
 *
 * <p>Two services share one journal (fleet.md: a dispatcher delivers the names it registers, and
 * "an operation of another name is left where it is (another dispatcher's, or a resume
 * handler's)"). The other service's target is down, so its queue (here 5,000 operations of
 * "refund") is due, and older than anything this service submits. Deliverer.findBatch pages through
 * Journal.findDue until it has filled the room under maxInFlight or read an empty page, skipping
 * names it does not register: every poll reads the whole foreign backlog, and a poll follows every
 * delivery that makes progress. Delivering 200 orders took 18 polls that read 90,520 records. The
 * owed-outcome hand-over was changed to read one page per poll for this very reason ("reading every
 * page then held up a restart's first deliveries behind the whole backlog"); the due pages were
 * not. An idle dispatcher does the same once per poll interval, for as long as the other target is
 * down: with 100,000 foreign rows on PostgreSQL, every instance reads them all every second.
 */
class OutboxForeignBacklogTest {
  private static final int FOREIGN = 5_000;
  private static final int ORDERS = 200;
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));
  /** Every record a read handed over: what the default of the names overload would filter too. */
  private final AtomicLong rowsRead = new AtomicLong();
  private final AtomicLong polls = new AtomicLong();
  private final ForwardingJournal counting = new ForwardingJournal(journal) {
    @Override
    public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
        throws IdempotencyException {
      return counted(super.findDue(now, owner, after, limit));
    }

    @Override
    public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
        int limit) throws IdempotencyException {
      if (after == null) {
        polls.incrementAndGet();  // each poll's (or drain check's) first page
      }
      // The journal's own filter: what it reads past is never handed over.
      return counted(journal.findDue(now, owner, names, after, limit));
    }

    @Override
    public List<OperationRecord> findByState(OperationState state, OperationId after, int limit)
        throws IdempotencyException {
      return counted(super.findByState(state, after, limit));
    }
  };

  private List<OperationRecord> counted(List<OperationRecord> page) {
    rowsRead.addAndGet(page.size());
    return page;
  }

  private OutboxDispatcher dispatcherBehindAForeignBacklog() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(counting).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    for (int i = 0; i < FOREIGN; i++) {
      // "a-refund" sorts ahead of "create-order" in identity order too.
      idem.enqueue(Operation.builder("a-refund", Requests.order("{\"r\":" + i + "}")).build());
    }
    time.advance(Duration.ofSeconds(1));
    return OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build();
  }

  private List<CompletableFuture<Outcome>> submitOrders(OutboxDispatcher outbox) {
    List<CompletableFuture<Outcome>> handles = new ArrayList<>();
    for (int i = 0; i < ORDERS; i++) {
      handles.add(outbox.submit(Operation.builder("create-order", Requests.order("{\"n\":" + i + "}")).build()));
    }
    return handles;
  }

  private void assertFewRowsPerPoll(String what) {
    long perPoll = rowsRead.get() / Math.max(1, polls.get());
    assertTrue(perPoll <= 10L * 100, what + " " + ORDERS + " orders took " + polls.get() + " polls that read "
        + rowsRead.get() + " records (" + perPoll + " per poll, pageSize 100): every poll pages through all "
        + FOREIGN + " due operations of a name this dispatcher does not deliver");
  }

  @Test
  void aPollDoesNotReadEveryDueOperationOfNamesItDoesNotDeliver() throws Exception {
    OutboxDispatcher outbox = dispatcherBehindAForeignBacklog();
    List<CompletableFuture<Outcome>> handles = submitOrders(outbox);
    outbox.start();
    time.advance(Duration.ofSeconds(10));

    handles.forEach(h -> assertTrue(h.isDone() && !h.isCompletedExceptionally()));
    assertEquals(ORDERS, host.sendTimes().size());
    assertFewRowsPerPoll("delivering");
    outbox.close();
  }
}
