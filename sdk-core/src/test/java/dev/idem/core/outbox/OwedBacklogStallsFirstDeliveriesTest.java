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
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Since a0b15a03 OwedOutcomes reads every page of owed outcomes at the first poll, and the poll runs
 * it before {@code deliverDue}. Owed outcomes of a name no dispatcher delivers (an operation renamed
 * or retired, a name only a batch job's resumePending hands over) are never recorded by anyone and
 * purge keeps them, so they only grow, and every restart of every instance reads all of them, on the
 * poller thread, before it sends anything: the queue (and the earlier incarnation's own leased work,
 * promised "at the first poll") waits for the whole backlog. Before, the first poll read one page.
 * Here 400 such rows, pageSize 10: 41 reads of the owed outcomes before the first delivery.
 */
class OwedBacklogStallsFirstDeliveriesTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal inner = new InMemoryJournal();
  private final AtomicInteger owedPagesRead = new AtomicInteger();
  private final ForwardingJournal journal = new ForwardingJournal(inner) {
    @Override
    public List<OperationRecord> findUndelivered(OperationId after, int limit) throws IdempotencyException {
      owedPagesRead.incrementAndGet();
      return super.findUndelivered(after, limit);
    }
  };

  @Test
  void theFirstDeliveryDoesNotWaitForEveryPageOfOutcomesOwedToNamesNobodyHereDelivers() throws Exception {
    IdempotentExecutor batch = IdempotentExecutor.builder().journal(inner).owner("batch").clock(time.clock()).build();
    for (int i = 0; i < 400; i++) {
      Operation legacy = Operation.builder("legacy-order", Requests.order("{\"n\":" + i + "}")).build();
      batch.enqueue(legacy);
      Lease lease = inner.claim(legacy.id(), "batch", time.now(), Duration.ofMinutes(2)).orElseThrow();
      inner.transition(legacy.id(), lease, Transition.finish(OperationState.SUCCEEDED, time.now(),
          FakeHost.response(201, Map.of()), "201"));
    }
    FakeHost host = new FakeHost(time, FakeHost.always(201));
    AtomicInteger readsBeforeFirstSend = new AtomicInteger(-1);
    AsyncTransport transport = (request, key) -> {
      readsBeforeFirstSend.compareAndSet(-1, owedPagesRead.get());
      return host.sendAsync(request, key);
    };
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).owner("pod-0").clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .leaseFor(Duration.ofMinutes(2)).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .pageSize(10).registerAsync("create-order", transport).build();
    outbox.submit(Operation.builder("create-order", Requests.order("{\"cart\":42}")).build());

    outbox.start();
    time.advance(Duration.ofMillis(500));  // the first poll

    assertEquals(1, host.totalAttempts(), "the queued order was sent at the first poll");
    assertTrue(readsBeforeFirstSend.get() <= 1, "the first poll read " + readsBeforeFirstSend.get() + " pages of"
        + " owed outcomes (400 of a name this dispatcher does not deliver, which nobody ever records) on the"
        + " poller thread before it sent anything");
    outbox.close();
  }
}
