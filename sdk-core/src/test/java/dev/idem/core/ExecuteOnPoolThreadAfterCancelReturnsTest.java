package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test (a review of 22b87c72, whose first design this test refuted; the fix tells
 * waiting app calls PENDING again and lets only resume passes and deliveries start over).
 *
 * <p>Review of 22b87c72 ("calls waiting on an async execution cancelled in its backoff start over
 * from the journal"): a cancel in the backoff no longer frees the operation's single flight on the
 * cancelling thread but on the executor's pool, so a synchronous {@code execute} of the operation
 * made right after the cancel on a thread of that pool waits for work queued behind itself.
 *
 * <p>The app's code runs on the executor's pool whenever it is a dependent stage of an
 * {@code executeAsync} future (those complete there). Here such code gives up waiting
 * asynchronously for an order in its backoff (it cancels that future) and sends the order inline
 * instead ({@code execute}, same operation, same key). The cancelled execution is quiet (nothing
 * to write), yet {@code holdFlightUntilQuiet} keeps its flight and hands the flight's release to
 * the pool; the {@code execute} joins the flight as a follower and blocks the pool thread that the
 * release is queued for. With a one-thread pool (or every thread of the owned pool, as many as the
 * processors, busy the same way) it never returns. Before 22b87c72 the flight was left on the
 * cancelling thread and the {@code execute} led and sent at once.
 *
 * <p>User-visible consequence: an {@code execute} that hangs until the executor is closed, holding
 * a pool thread (every later asynchronous step of every operation of this executor queues behind
 * it). The test waits a bounded time for the call; close() ends the hang afterwards.
 */
class ExecuteOnPoolThreadAfterCancelReturnsTest {
  private static final long WAIT_SECONDS = 5;

  private final VirtualTime time = new VirtualTime();
  private final ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "idem-test-async"));
  private final ScriptedTransport transport = new ScriptedTransport(time).then(status(503)).otherwise(status(201));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(new InMemoryJournal())
      .clock(time.clock()).sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(pool)
      .random(() -> 0.5)
      .retryPolicy(RetryPolicy.builder().maxAttempts(4).baseDelay(Duration.ofSeconds(1))
          .maxDelay(Duration.ofSeconds(1)).jitter(Jitter.NONE).build())
      .build();

  @AfterEach
  void stop() {
    idem.close(); // ends the execute still waiting on the flight, if any
    pool.shutdownNow();
  }

  @Test
  void anExecuteOnAPoolThreadRightAfterCancellingTheSameOperationInItsBackoffReturns() throws Exception {
    CompletableFuture<Outcome> async = idem.executeAsync(op, transport);
    assertEquals(1, transport.count());
    assertFalse(async.isDone(), "in its backoff after the 503");

    // App code on the executor's pool (a dependent stage of another executeAsync, say).
    CompletableFuture<Outcome> inline = CompletableFuture.supplyAsync(() -> {
      async.cancel(true);
      try {
        return idem.execute(op, transport);
      } catch (IdempotencyException e) {
        throw new CompletionException(e);
      }
    }, pool);

    try {
      Outcome o = inline.get(WAIT_SECONDS, TimeUnit.SECONDS);
      assertEquals(201, o.response().status());
    } catch (TimeoutException hung) {
      fail("execute() of the operation, made on a pool thread right after cancelling its executeAsync in the"
          + " backoff, has not returned after " + WAIT_SECONDS + " s: it waits on the cancelled execution's"
          + " flight, whose release is queued on the pool behind this very call; sent " + transport.count()
          + " attempt(s)");
    }
  }
}
