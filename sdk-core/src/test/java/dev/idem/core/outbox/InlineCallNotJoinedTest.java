package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: the dispatcher leaves an operation whose execution runs in this executor to it.
 *
 * <p>An app calls inline ({@code executeAsync}) for an operation name that its outbox also delivers
 * with outcome callbacks (README: register a transport for every name you call inline, so that
 * what inline calls leave PENDING is delivered). An inline call still waiting for its answer when
 * the dispatcher polls is listed first by the journal's due query (IN_FLIGHT under the executor's
 * own live lease); the dispatcher starts a "delivery" of it, which joins the call's single flight
 * (holding one of its maxInFlight slots), and when the call succeeds the Deliverer takes the
 * joined outcome (not read from the journal) as its own delivery's and tells onSuccess. An alike
 * inline call whose answer came back before a poll is not told. So whether the app's callback runs
 * for an inline call (never queued, never left PENDING, its caller handed the outcome) depends on
 * timing: an app that confirms orders in onSuccess and in its inline path confirms some inline
 * orders twice, at random, and the dispatcher's delivery slots are spent waiting on inline calls.
 */
class InlineCallNotJoinedTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  @Test
  void whetherTheCallbacksHearOfAnInlineCallDoesNotDependOnWhetherAPollFellWhileItWasOnTheWire() throws Exception {
    CompletableFuture<ResponseSnapshot> slowAnswer = new CompletableFuture<>();
    ScriptedTransport inlineTransport = new ScriptedTransport(time)
        .then(ScriptedTransport.status(201), ScriptedTransport.hold(slowAnswer));
    ScriptedTransport outboxTransport = new ScriptedTransport(time);
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    List<Outcome> toldOfSuccess = new CopyOnWriteArrayList<>();
    List<OperationException> toldOfFailure = new CopyOnWriteArrayList<>();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", outboxTransport, toldOfSuccess::add, toldOfFailure::add).build().start();
    time.advance(Duration.ZERO);

    // Two inline calls of the same name, alike but for the moment their answers come back.
    Operation fast = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    Operation slow = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    CompletableFuture<Outcome> fastCall = idem.executeAsync(fast, inlineTransport);
    CompletableFuture<Outcome> slowCall = idem.executeAsync(slow, inlineTransport);
    time.advance(Duration.ofSeconds(5));  // polls while the slow call waits for its answer
    int slotsTaken = outbox.inDelivery();
    slowAnswer.complete(ScriptedTransport.response(201));
    time.advance(Duration.ofSeconds(5));

    assertTrue(fastCall.isDone() && !fastCall.isCompletedExceptionally(), "the inline caller got its success");
    assertTrue(slowCall.isDone() && !slowCall.isCompletedExceptionally(), "the inline caller got its success");
    assertEquals(0, outboxTransport.sent().size(), "the outbox sent nothing itself");
    List<Object> told = toldOfSuccess.stream().map(o -> (Object) o.operationId()).toList();
    assertEquals(told.contains(fast.id()), told.contains(slow.id()),
        "two alike inline calls, never queued nor left PENDING: the outbox's onSuccess was told of " + told
            + " (fast: " + fast.id() + ", slow: " + slow.id() + "); the slow one was joined as a delivery while"
            + " on the wire, holding " + slotsTaken + " of the dispatcher's delivery slot(s)");
    outbox.close();
  }

  /**
   * The same joins spend the dispatcher's delivery slots: with as many inline calls on the wire as
   * maxInFlight, a submitted operation waits for them, though it has a slot's worth of work of its
   * own and the target answers it at once.
   */
  @Test
  void inlineCallsOnTheWireDoNotTakeTheDispatchersDeliverySlots() throws Exception {
    ScriptedTransport inlineTransport = new ScriptedTransport(time)
        .then(ScriptedTransport.hold(new CompletableFuture<>()), ScriptedTransport.hold(new CompletableFuture<>()));
    ScriptedTransport outboxTransport = new ScriptedTransport(time);
    outboxTransport.then(ScriptedTransport.status(201));
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .maxInFlight(2).registerAsync("create-order", outboxTransport).build().start();
    idem.executeAsync(Operation.builder("create-order", Requests.order("{\"inline\":1}")).build(), inlineTransport);
    idem.executeAsync(Operation.builder("create-order", Requests.order("{\"inline\":2}")).build(), inlineTransport);
    time.advance(Duration.ofSeconds(2));

    CompletableFuture<Outcome> queued = outbox.submit(
        Operation.builder("create-order", Requests.order("{\"queued\":1}")).build());
    time.advance(Duration.ofSeconds(30));

    assertTrue(queued.isDone(), "the queued operation waited 30 s for a delivery slot: the dispatcher's "
        + outbox.inDelivery() + " slot(s) are held by joins of the app's inline calls; sent by the outbox: "
        + outboxTransport.sent().size());
    outbox.close();
  }
}
