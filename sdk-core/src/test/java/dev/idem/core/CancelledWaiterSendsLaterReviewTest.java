package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.hold;
import static dev.idem.core.support.ScriptedTransport.response;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * d56e85b: after a cancel, the flight is held until the cancelled execution is quiet; a call that
 * joins meanwhile waits, then "starts over from the journal with the same key". The Reactor pattern
 * it is for, {@code timeout(...).retry(n)}, also cancels that waiting call when its own timeout
 * fires (the first attempt is still out). executeAsync's Javadoc: cancelling the future means no
 * further attempt is sent. Yet the waiting call's cancel only cancels its copy
 * ({@code follow}: {@code handle(...).thenCompose}): once the first attempt ends, the cancelled
 * waiter starts a new execution anyway and sends the request, that no caller waits for and none can
 * cancel, after the app was told the call was cancelled.
 *
 * <p>Found by a review on 2026-12-05 (async3).
 */
class CancelledWaiterSendsLaterReviewTest {
  private static final long LONG = 10;

  private final VirtualTime time = new VirtualTime();
  private final ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "idem-test-async"));
  private final InMemoryJournal journal = new InMemoryJournal();
  private final CompletableFuture<ResponseSnapshot> firstWire = new CompletableFuture<>();
  private final ScriptedTransport transport = new ScriptedTransport(time).then(hold(firstWire)).otherwise(status(201));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .scheduler(time.scheduler()).asyncExecutor(pool).build();

  @AfterEach
  void stop() {
    idem.close();
    pool.shutdownNow();
  }

  @Test
  void aCallCancelledWhileItWaitsOnAHeldFlightSendsNothingLater() throws Exception {
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    assertEquals(1, transport.count(), "the first attempt is on the wire");
    assertTrue(first.cancel(true)); // timeout() fired

    CompletableFuture<Outcome> retry = idem.executeAsync(op, transport); // retry(): waits on the held flight
    assertFalse(retry.isDone(), "waits for the cancelled execution's attempt");
    assertTrue(retry.cancel(true)); // the retry's own timeout() fired too: the app gives up

    firstWire.complete(response(201)); // the first attempt ends; the cancelled execution records it
    pool.submit(() -> { }).get(LONG, TimeUnit.SECONDS); // everything the pool was handed is done

    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertEquals(1, transport.count(), "a call cancelled while it waited on the held flight sent key " + op.id().key()
        + " again once the flight was released, although its caller had cancelled it; journal: " + r.state() + " "
        + r.attempts());
    assertEquals(OperationState.PENDING, r.state(), "both calls were cancelled: the operation is left for a resume");
  }
}
