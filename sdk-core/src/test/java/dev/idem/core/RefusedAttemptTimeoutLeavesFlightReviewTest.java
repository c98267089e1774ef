package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.hold;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Scheduler;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An execution that ends its call PENDING while its attempt is still on the wire (the scheduler
 * refused the attempt timeout: AsyncDriver.withTimeout, endPending) may still write the journal,
 * like a cancelled or closed one: the attempt is recorded when it ends. leadAsync keeps the flight
 * only after a cancel or a close (7bcd7887), so here it leaves it at once, and a call for the same
 * operation made meanwhile leads and sends the key again while the first attempt is still on the
 * wire: "the key is never sent twice at once from this process" does not hold.
 *
 * <p>Found by a review on 2026-12-05 (async4).
 */
class RefusedAttemptTimeoutLeavesFlightReviewTest {
  private final VirtualTime time = new VirtualTime();
  private final AtomicBoolean refuse = new AtomicBoolean();
  /** The virtual scheduler, refusing timers while {@code refuse} is set (an app's scheduler shutting down, say). */
  private final Scheduler scheduler = (task, delay) -> {
    if (refuse.get()) {
      throw new RejectedExecutionException("scheduler refuses");
    }
    return time.scheduler().schedule(task, delay);
  };

  private final CompletableFuture<ResponseSnapshot> firstWire = new CompletableFuture<>();
  private final CompletableFuture<ResponseSnapshot> secondWire = new CompletableFuture<>();
  private final ScriptedTransport transport = new ScriptedTransport(time).then(hold(firstWire)).then(hold(secondWire));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(new InMemoryJournal())
      .clock(time.clock()).scheduler(scheduler).asyncExecutor(Runnable::run)
      .retryPolicy(RetryPolicy.builder().attemptTimeout(Duration.ofSeconds(5)).build()).build();

  @AfterEach
  void stop() {
    idem.close();
  }

  @Test
  void aCallMadeWhileAnAttemptIsStillOnTheWireDoesNotSendTheKeyBesideIt() throws Exception {
    refuse.set(true);
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    ExecutionException ended = assertThrows(ExecutionException.class, first::get);
    assertInstanceOf(OperationPendingException.class, ended.getCause());
    assertEquals(1, transport.count());
    refuse.set(false);

    CompletableFuture<Outcome> again = idem.executeAsync(op, transport); // the app retries the pending call
    assertEquals(1, transport.count(), "key " + op.key() + " sent a second time while its first attempt was still"
        + " on the wire (never answered, never recorded); journal: " + idem.journal().find(op.id()).orElseThrow());
  }

  @Test
  void theCallThatWaitedSendsTheSameKeyOnceTheFirstAttemptIsRecordedAndAgreesWithTheJournal() throws Exception {
    refuse.set(true);
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    assertInstanceOf(OperationPendingException.class, assertThrows(ExecutionException.class, first::get).getCause());
    refuse.set(false);
    CompletableFuture<Outcome> again = idem.executeAsync(op, transport);

    // The first attempt ends: the caller was told PENDING, so it is recorded as ambiguous (PENDING),
    // and only then does the waiting call send, with the same key.
    firstWire.complete(ScriptedTransport.response(201));
    OperationRecord between = idem.journal().find(op.id()).orElseThrow();
    assertEquals(1, between.attempts().size(), between.toString());
    assertEquals(Classification.AMBIGUOUS, between.attempts().get(0).classification(), between.toString());
    assertEquals(2, transport.count(), "the waiting call sends once the first attempt is recorded");
    assertFalse(again.isDone());

    secondWire.complete(ScriptedTransport.response(201));
    assertEquals(201, again.get().response().status());
    OperationRecord done = idem.journal().find(op.id()).orElseThrow();
    assertEquals(OperationState.SUCCEEDED, done.state(), done.toString());
    assertEquals(2, done.attempts().size(), done.toString());
    assertEquals(op.key(), transport.sent().get(0).key());
    assertEquals(op.key(), transport.sent().get(1).key());
  }

  @Test
  void closeEndsTheCallWaitingForTheAttemptOnTheWireAtOnce() throws Exception {
    refuse.set(true);
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    assertThrows(ExecutionException.class, first::get);
    refuse.set(false);
    CompletableFuture<Outcome> again = idem.executeAsync(op, transport);
    assertFalse(again.isDone(), "it waits for the first attempt");

    idem.close(); // the first attempt is still on the wire and never ends
    assertInstanceOf(OperationPendingException.class, assertThrows(ExecutionException.class, again::get).getCause());
    assertEquals(1, transport.count());
  }
}
