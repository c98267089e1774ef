package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.support.FakeHost;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * Issue 24: the dispatcher and the executor it delivers through both close. Closed in the
 * documented order (dispatcher, then executor) nothing is lost and nothing hangs; closed the other
 * way round, the dispatcher notices at its next poll and stops instead of polling a closed executor.
 */
class OutboxCloseOrderTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor(String owner) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).owner(owner).build();
  }

  private OutboxDispatcher outbox(IdempotentExecutor idem, FakeHost host) {
    return OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build();
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  private static Throwable failure(CompletableFuture<?> f) {
    assertTrue(f.isDone(), "not completed");
    return assertThrows(ExecutionException.class, f::get).getCause();
  }

  @Test
  void closingTheDispatcherThenItsExecutorLosesNothing() throws Exception {
    Operation waiting = order(1);
    Operation onTheWire = order(2);
    IdempotencyKey wireKey = onTheWire.id().key();
    // The first attempt of `waiting` gets a 503 (so it waits in its backoff); that of `onTheWire`
    // never answers. Every later attempt succeeds.
    FakeHost host = new FakeHost(time, (key, n, now) -> n > 1 ? FakeHost.Reply.status(201)
        : key.equals(wireKey) ? FakeHost.Reply.hang() : FakeHost.Reply.status(503));
    IdempotentExecutor idem = executor("first");
    OutboxDispatcher outbox = outbox(idem, host).start();
    CompletableFuture<Outcome> h1 = outbox.submit(waiting);
    CompletableFuture<Outcome> h2 = outbox.submit(onTheWire);
    time.advance(Duration.ZERO);
    assertEquals(2, host.totalAttempts());

    outbox.close();
    idem.close();

    assertInstanceOf(OperationPendingException.class, failure(h1));
    assertInstanceOf(OperationPendingException.class, failure(h2));
    assertEquals(OperationState.PENDING, journal.find(waiting.id()).orElseThrow().state());
    // The late answer reaches a closed executor: not recorded, held under the lease until it expires.
    host.held().get(0).complete(FakeHost.response(201, java.util.Map.of()));
    assertEquals(OperationState.IN_FLIGHT, journal.find(onTheWire.id()).orElseThrow().state());
    time.runUntilIdle();
    assertEquals(2, host.totalAttempts(), "nothing sent after close");

    // The next process delivers both, each once more with its own key.
    time.advance(Duration.ofMinutes(3));
    try (IdempotentExecutor next = executor("second"); OutboxDispatcher again = outbox(next, host).start()) {
      CompletableFuture<Outcome> d1 = again.await(waiting.id());
      CompletableFuture<Outcome> d2 = again.await(onTheWire.id());
      time.advance(Duration.ofSeconds(1));
      assertEquals(waiting.key(), d1.get().key());
      assertEquals(wireKey, d2.get().key());
    }
    assertEquals(2, host.attempts(waiting.key()));
    assertEquals(2, host.attempts(wireKey));
    assertEquals(2, host.effects());
    assertEquals(OperationState.SUCCEEDED, journal.find(waiting.id()).orElseThrow().state());
    assertEquals(OperationState.SUCCEEDED, journal.find(onTheWire.id()).orElseThrow().state());
  }

  @Test
  void anExecutorClosedFirstStopsTheDispatcherAtItsNextPoll() throws Exception {
    FakeHost down = new FakeHost(time, FakeHost.always(503));
    IdempotentExecutor idem = executor("first");
    OutboxDispatcher outbox = outbox(idem, down).start();
    Operation op = order(1);
    CompletableFuture<Outcome> handle = outbox.submit(op);
    time.advance(Duration.ZERO);

    idem.close();
    time.advance(Duration.ofMinutes(1));

    assertInstanceOf(OperationPendingException.class, failure(handle), "the handle does not hang");
    assertEquals(0, outbox.inDelivery());
    assertEquals(0, time.pendingTasks(), "no poll is scheduled any more");
    assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state());
    assertInstanceOf(IllegalStateException.class, failure(outbox.submit(order(2))));
    outbox.close();
  }
}
