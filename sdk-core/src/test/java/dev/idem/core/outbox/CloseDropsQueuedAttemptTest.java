package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * OutboxDispatcher.close() shuts its own worker pool down with shutdownNow(), which drops the
 * attempts queued behind a busy worker: their futures never complete, so the AsyncDriver never
 * learns the attempt ended and never gives its claim back. The operation, never sent, stays
 * IN_FLIGHT under the lease instead of PENDING, and the next owner must wait for the lease and
 * then counts an attempt that was never sent as ambiguous.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class CloseDropsQueuedAttemptTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  @Test
  void anAttemptQueuedOnTheWorkerPoolWhenTheDispatcherClosesLeavesItsOperationPending() throws Exception {
    Map<IdempotencyKey, Integer> sent = new ConcurrentHashMap<>();
    CountDownLatch firstOnTheWire = new CountDownLatch(1);
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .owner("first").build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .syncWorkers(1)
        .register("create-order", (request, key) -> {
          sent.merge(key, 1, Integer::sum);
          firstOnTheWire.countDown();
          try {
            new CountDownLatch(1).await();  // blocks until interrupted
          } catch (InterruptedException e) {
            throw new InterruptedIOException("interrupted");
          }
          return FakeHost.response(201, Map.of());
        }).build().start();
    Operation first = order(1);
    Operation second = order(2);
    outbox.submit(first);
    outbox.submit(second);
    time.advance(Duration.ZERO);
    assertTrue(firstOnTheWire.await(5, TimeUnit.SECONDS));
    assertEquals(2, outbox.inDelivery());
    // One is on the only worker (whichever the dispatcher started first); the other waits for it.
    Operation queued = sent.containsKey(first.key()) ? second : first;

    outbox.close();

    assertEquals(1, sent.size(), "one attempt on the wire, the other never sent: " + sent);
    assertEquals(null, sent.get(queued.key()), "the queued attempt was never sent");
    // The class comment: "an operation not delivered stays PENDING in the journal".
    assertEquals(OperationState.PENDING, journal.find(queued.id()).orElseThrow().state(),
        "never sent, yet left IN_FLIGHT under the closed dispatcher's lease; attempts: "
            + journal.find(queued.id()).orElseThrow().attempts());
  }
}
