package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.hold;
import static dev.idem.core.support.ScriptedTransport.response;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.OwnThreads;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A cancel that comes exactly as the execution finishes: its answer (201) is being recorded
 * SUCCEEDED on the pool when the caller cancels (a WebClient {@code timeout()} that fires as the
 * response arrives). Another call for the same operation that joined the flight before the cancel,
 * and cancelled nothing, is told "the operation is PENDING and will be sent again with the same
 * key" (leadAsync), while the journal says SUCCEEDED and nothing will ever send it again; a call
 * that joins a moment later, after the cancel, waits for the held flight (d56e85b) and gets the
 * 201. The follower's caller acts on a state the journal contradicts (it reports a pending order
 * that was placed, or places it again under a new key).
 *
 * <p>Found by a review on 2026-12-05 (async3).
 */
class CancelDuringFinalTransitionReviewTest {
  private static final long LONG = 10;

  private final VirtualTime time = new VirtualTime();
  private final ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "idem-test-async"));
  private final CountDownLatch successWriting = new CountDownLatch(1);
  private final CountDownLatch successMayLand = new CountDownLatch(1);

  /** The SUCCEEDED transition lands, then its thread waits before going on. */
  private final ForwardingJournal journal = new ForwardingJournal(new InMemoryJournal()) {
    @Override
    public OperationRecord transition(OperationId id, Lease lease, Transition transition) throws IdempotencyException {
      OperationRecord r = super.transition(id, lease, transition);
      if (transition.target() == OperationState.SUCCEEDED) {
        successWriting.countDown();
        try {
          successMayLand.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return r;
    }
  };

  private final CompletableFuture<ResponseSnapshot> wire = new CompletableFuture<>();
  private final ScriptedTransport transport = new ScriptedTransport(time).then(hold(wire)).otherwise(status(201));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .scheduler(time.scheduler()).asyncExecutor(pool).build();

  @AfterEach
  void stop() {
    successMayLand.countDown();
    idem.close();
    pool.shutdownNow();
  }

  @Test
  void aFollowerIsNotToldPendingOfAnOperationTheJournalRecordsSucceeded() throws Exception {
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    CompletableFuture<Outcome> follower = idem.executeAsync(op, transport); // another caller, same operation
    assertEquals(1, transport.count(), "the follower joined the flight and sent nothing");

    OwnThreads.supply(() -> wire.complete(response(201))); // the HTTP client's thread: recorded on the pool
    assertTrue(successWriting.await(LONG, TimeUnit.SECONDS), "the answer is being recorded");
    assertTrue(first.cancel(true)); // the first caller's timeout fires right then
    CompletableFuture<Outcome> later = idem.executeAsync(op, transport); // a call just after the cancel
    successMayLand.countDown();
    assertEquals(201, later.get(LONG, TimeUnit.SECONDS).response().status(), "the later call gets the outcome");

    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertEquals(OperationState.SUCCEEDED, r.state());
    assertEquals(1, transport.count());
    try {
      assertEquals(201, follower.get(LONG, TimeUnit.SECONDS).response().status());
    } catch (ExecutionException e) {
      fail("a call that joined before the cancel, and cancelled nothing, was told '" + e.getCause().getMessage()
          + "' while the journal records " + op.id() + " " + r.state() + " and a call made after the cancel got"
          + " its 201");
    }
    assertFalse(follower.isCompletedExceptionally());
  }
}
