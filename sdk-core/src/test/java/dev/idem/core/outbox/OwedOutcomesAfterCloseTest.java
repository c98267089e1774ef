package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.Outcome;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.JournalOps;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * close(): "Stops at once: no more polls"; register's Javadoc: a callback sees an owed outcome
 * "twice, never zero times". The restarted pod-0 hands its earlier incarnation's two owed outcomes
 * to the callbacks at its first poll, on the poller thread (the loop's own, no scheduler given).
 * The callback saves each outcome (a blocking write, here a latch). The app closes the dispatcher
 * while the first callback is saving: PollLoop.close() shuts the poller's thread down, which
 * interrupts the callback, and OwedOutcomes, which never looks at the dispatcher's state, goes on
 * handing the rest of its page after close() returned, on a thread whose interrupt flag is set.
 * Each callback's write fails at once, the exception is logged and "counts as told", and the
 * journal records the outcome as received: the app saved neither, and nothing owes them any more.
 */
class OwedOutcomesAfterCloseTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal inner = new InMemoryJournal();

  private Operation owedUnderPod0(int n) throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
    JournalOps.endedOwed(inner, time, "pod-0", op);
    return op;
  }

  @Test
  void closeDoesNotHandTheRestOfAPageToInterruptedCallbacksAndRecordThemAsReceived() throws Exception {
    Operation first = owedUnderPod0(1);
    Operation second = owedUnderPod0(2);
    CountDownLatch saving = new CountDownLatch(1);
    CountDownLatch neverReleased = new CountDownLatch(1);
    List<OperationId> called = Collections.synchronizedList(new ArrayList<>());
    List<OperationId> saved = Collections.synchronizedList(new ArrayList<>());
    List<OperationId> calledAfterClose = Collections.synchronizedList(new ArrayList<>());
    boolean[] closed = new boolean[1];
    Thread[] poller = new Thread[1];

    IdempotentExecutor restarted = IdempotentExecutor.builder().journal(inner).owner("pod-0").clock(time.clock())
        .asyncExecutor(Runnable::run).leaseFor(Duration.ofMinutes(2)).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(restarted).clock(time.clock())
        .registerAsync("create-order", new FakeHost(time, FakeHost.always(201)), (Outcome o) -> {
          synchronized (closed) {
            if (closed[0]) {
              calledAfterClose.add(o.operationId());
            }
          }
          called.add(o.operationId());
          poller[0] = Thread.currentThread();
          saving.countDown();
          try {
            neverReleased.await();  // the app's blocking write
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("the write was interrupted", e);
          }
          saved.add(o.operationId());
        }, e -> { }).build().start();

    assertTrue(saving.await(10, TimeUnit.SECONDS), "the first poll hands the first owed outcome");
    synchronized (closed) {
      outbox.close();
      closed[0] = true;
    }
    // The poller's thread ends once its poll returns (close() shut its pool down): whatever
    // OwedOutcomes hands or records after close() has happened by then. Bounded, in case it hangs.
    poller[0].join(10_000);

    assertEquals(List.of(), calledAfterClose, "close() returned, yet OwedOutcomes handed further owed outcomes to"
        + " the callbacks on the interrupted poller thread; called " + called + ", saved " + saved);
    assertTrue(inner.find(first.id()).orElseThrow().outcomeUndelivered()
        && inner.find(second.id()).orElseThrow().outcomeUndelivered(), "the callbacks saved " + saved + " of "
        + called + " (interrupted by close()), yet the journal records as received: first "
        + !inner.find(first.id()).orElseThrow().outcomeUndelivered() + ", second "
        + !inner.find(second.id()).orElseThrow().outcomeUndelivered());
    restarted.close();
  }
}
