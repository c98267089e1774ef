package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.hold;
import static dev.idem.core.support.ScriptedTransport.response;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.OwnThreads;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A call that waited on a cancelled execution's held flight starts over once that execution is
 * quiet, on the thread that made it quiet. When the app's pool is full, that is the HTTP client's
 * thread that completed the attempt (AsyncDriver records it there rather than lose it): the new
 * start's journal work (its begin and claim) then runs as no call close knows of. close() returns
 * while it is still in the journal, and the app, as told, closes the journal under it.
 *
 * <p>Found by a review on 2026-12-05 (async3, an unproven suspicion, shown here).
 */
class RestartedWaiterCountedByCloseReviewTest {
  private static final long LONG = 10;

  private final VirtualTime time = new VirtualTime();
  private final ExecutorService threads = Executors.newSingleThreadExecutor(r -> new Thread(r, "idem-test-async"));
  private final AtomicBoolean full = new AtomicBoolean();
  /** The app's pool, which refuses work once full. */
  private final Executor pool = task -> {
    if (full.get()) {
      throw new RejectedExecutionException("full");
    }
    threads.execute(task);
  };
  private final CountDownLatch restartInJournal = new CountDownLatch(1);
  private final CountDownLatch restartMayGo = new CountDownLatch(1);

  /** The second begin that claims (the waiter's new start, as leader) waits in the journal. */
  private final ForwardingJournal journal = new ForwardingJournal(new InMemoryJournal()) {
    private final AtomicInteger claimingBegins = new AtomicInteger();

    @Override
    public BeginResult beginAndClaim(NewOperation operation, String owner, Duration leaseFor)
        throws IdempotencyException {
      if (claimingBegins.incrementAndGet() == 2) {
        restartInJournal.countDown();
        try {
          restartMayGo.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return super.beginAndClaim(operation, owner, leaseFor);
    }
  };

  private final CompletableFuture<ResponseSnapshot> wire = new CompletableFuture<>();
  private final ScriptedTransport transport = new ScriptedTransport(time).then(hold(wire)).otherwise(status(201));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .scheduler(time.scheduler()).asyncExecutor(pool).build();

  @AfterEach
  void stop() {
    restartMayGo.countDown();
    idem.close();
    threads.shutdownNow();
  }

  @Test
  void closeWaitsForTheJournalWorkOfACallStartingOverAfterAHeldFlight() throws Exception {
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    assertTrue(first.cancel(true)); // its attempt is on the wire: the flight is held
    CompletableFuture<Outcome> waiter = idem.executeAsync(op, transport);
    assertFalse(waiter.isDone(), "waits for the cancelled execution's attempt");

    full.set(true);
    OwnThreads.supply(() -> wire.complete(response(201))); // the HTTP client's thread records it: the pool is full
    assertTrue(restartInJournal.await(LONG, TimeUnit.SECONDS), "the waiter started over and is in the journal");

    CompletableFuture<Void> closed = OwnThreads.closeUntilItWaits(idem);
    assertFalse(closed.isDone(), "close returned while a call starting over for " + op.id() + " was still writing"
        + " the journal, which the app closes next");
    restartMayGo.countDown();
    closed.get(LONG, TimeUnit.SECONDS);

    ExecutionException ended = assertThrows(ExecutionException.class, () -> waiter.get(LONG, TimeUnit.SECONDS));
    assertInstanceOf(OperationPendingException.class, ended.getCause());
    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertEquals(1, transport.count(), "nothing sent after close");
    assertEquals(OperationState.PENDING, r.state(), "the new start's claim was given back: " + r);
    assertEquals(1, r.attempts().size(), "only the attempt sent: " + r.attempts());
  }
}
