package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: the dispatcher leaves any operation whose execution runs in this executor, whatever its lease.
 *
 * <p>Review of 4ffc716d (Deliverer.runsHere): "an operation whose execution runs in this executor is
 * now left to it" holds only while that execution holds a live lease. An inline executeAsync call
 * between two attempts is still running in this executor (its single flight is led, its caller
 * waits for its future), but the journal holds it PENDING, due at its backoff's end. Its retry is
 * handed to the executor's asyncExecutor, which claims it; if that pool is busy for a moment when
 * the dispatcher polls, the poll finds the operation PENDING and due, runsHere says false (no own
 * lease), and the dispatcher starts a delivery that joins the inline call's flight: it holds a
 * delivery slot and its onSuccess callback is told of an inline outcome, which is what the commit
 * set out to stop.
 */
class InlineCallBetweenAttemptsTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  /** The executor's async pool, run by the test: busy until the test drains it. */
  private final ArrayDeque<Runnable> pool = new ArrayDeque<>();
  private final Executor busyPool = pool::add;

  private void drainPool() {
    for (Runnable r; (r = pool.poll()) != null; ) {
      r.run();
    }
  }

  @Test
  void anInlineCallWaitingForItsRetryIsNotJoinedAsADelivery() throws Exception {
    ScriptedTransport inlineTransport = new ScriptedTransport(time)
        .then(ScriptedTransport.status(503), ScriptedTransport.status(201));
    ScriptedTransport outboxTransport = new ScriptedTransport(time);
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(busyPool).sleeper(time.sleeper()).random(() -> 0.5).build();
    List<Outcome> toldOfSuccess = new CopyOnWriteArrayList<>();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", outboxTransport, toldOfSuccess::add, e -> { }).build().start();
    time.advance(Duration.ZERO);
    drainPool();

    Operation inline = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    CompletableFuture<Outcome> call = idem.executeAsync(inline, inlineTransport);
    drainPool();
    assertEquals(1, inlineTransport.sent().size(), "the first attempt went out (503)");
    assertEquals(OperationState.PENDING, journal.find(inline.id()).orElseThrow().state());

    // Past the backoff: the retry is handed to the (busy) pool; a poll falls meanwhile.
    time.advance(Duration.ofSeconds(10));
    int slots = outbox.inDelivery();
    drainPool();
    time.advance(Duration.ofSeconds(5));
    drainPool();

    assertTrue(call.isDone() && !call.isCompletedExceptionally(), "the inline caller got its success");
    assertEquals(0, outboxTransport.sent().size(), "the outbox sent nothing itself");
    assertEquals(List.of(), toldOfSuccess.stream().map(Outcome::operationId).toList(),
        "the outbox's onSuccess was told of an inline call never queued, never left PENDING: a poll fell while"
            + " its retry waited for the async pool, and the dispatcher joined it");
    assertEquals(0, slots, "the dispatcher took a delivery slot to join an inline call running in this executor");
    outbox.close();
  }
  /**
   * The same for an inline call on the wire longer than its lease: the journal's due page lists it
   * (IN_FLIGHT, its lease expired), runsHere says false (no live own lease), and the dispatcher joins it.
   */
  @Test
  void anInlineCallOnTheWirePastItsLeaseIsNotJoinedAsADelivery() throws Exception {
    CompletableFuture<dev.idem.core.spi.ResponseSnapshot> slowAnswer = new CompletableFuture<>();
    ScriptedTransport inlineTransport = new ScriptedTransport(time).then(ScriptedTransport.hold(slowAnswer));
    ScriptedTransport outboxTransport = new ScriptedTransport(time);
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .leaseFor(Duration.ofSeconds(30)).build();
    List<Outcome> toldOfSuccess = new CopyOnWriteArrayList<>();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", outboxTransport, toldOfSuccess::add, e -> { }).build().start();
    time.advance(Duration.ZERO);

    Operation inline = Operation.builder("create-order", Requests.order("{\"n\":3}")).build();
    CompletableFuture<Outcome> call = idem.executeAsync(inline, inlineTransport);
    time.advance(Duration.ofSeconds(40));  // still on the wire, past its 30 s lease; polls fall meanwhile
    int slots = outbox.inDelivery();
    slowAnswer.complete(ScriptedTransport.response(201));
    time.advance(Duration.ofSeconds(5));

    assertTrue(call.isDone(), "the inline call ended");
    assertEquals(0, outboxTransport.sent().size(), "the outbox sent nothing itself");
    assertEquals(List.of(), toldOfSuccess.stream().map(Outcome::operationId).toList(),
        "the outbox's onSuccess was told of an inline call never queued: a poll found it past its lease and"
            + " the dispatcher joined it (" + slots + " slot(s) held)");
    outbox.close();
  }
}
