package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.Outcome;
import dev.idem.core.outbox.DeliveryTracker.Delivery;
import dev.idem.core.outbox.DeliveryTracker.Round;
import dev.idem.core.support.FakeHost;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class DeliveryTrackerTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
  private final DeliveryTracker tracker = new DeliveryTracker(journal, time.clock(), 2, id -> false);

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  @Test
  void oneHandlePerOperation() {
    OperationId id = order(1).id();
    assertNull(tracker.existingWaiter(id));

    CompletableFuture<Outcome> w = tracker.waiter(id);

    assertSame(w, tracker.waiter(id));
    assertSame(w, tracker.existingWaiter(id));
  }

  @Test
  void capacityIsTheRoomLeftAndTheOperationsAlreadyInDelivery() {
    OperationId a = order(1).id();
    OperationId b = order(2).id();
    Round round = new Round(2);
    tracker.start(a, round);
    tracker.start(b, round);

    DeliveryTracker.Capacity c = tracker.capacity(3);

    assertEquals(1, c.room());
    assertEquals(Set.of(a, b), c.busy());
    assertEquals(2, tracker.inDelivery());
    assertEquals(-1, tracker.capacity(1).room(), "over the bound after maxInFlight shrank: no room");
  }

  @Test
  void aTerminalEndingHandsOverTheHandleAndANonTerminalOneKeepsIt() {
    OperationId id = order(1).id();
    CompletableFuture<Outcome> w = tracker.waiter(id);

    DeliveryTracker.Ended pending = tracker.end(tracker.start(id, new Round(1)), false, false);
    assertNull(pending.waiter(), "still PENDING: the handle waits for a later delivery");
    assertEquals(0, tracker.inDelivery());

    DeliveryTracker.Ended done = tracker.end(tracker.start(id, new Round(1)), true, true);
    assertSame(w, done.waiter());
    assertNull(tracker.existingWaiter(id));
  }

  @Test
  void aRoundIsOverWhenAllItsDeliveriesEndedAndProgressedIfAnyDid() {
    Round round = new Round(3);
    Delivery a = tracker.start(order(1).id(), round);
    Delivery b = tracker.start(order(2).id(), round);
    Delivery c = tracker.start(order(3).id(), round);

    DeliveryTracker.Ended first = tracker.end(a, false, false);
    DeliveryTracker.Ended second = tracker.end(b, true, true);
    DeliveryTracker.Ended last = tracker.end(c, false, false);

    assertFalse(first.roundOver());
    assertFalse(first.roundProgressed());
    assertFalse(second.roundOver());
    assertTrue(last.roundOver());
    assertTrue(last.roundProgressed(), "one delivery of the round made progress");
  }

  @Test
  void closeHandsOverRunningDeliveriesAndHandlesAndNothingStartsAfter() {
    OperationId running = order(1).id();
    OperationId starting = order(2).id();
    OperationId waiting = order(3).id();
    Round round = new Round(2);
    CompletableFuture<Outcome> onTheWire = new CompletableFuture<>();
    assertFalse(tracker.attach(tracker.start(running, round), onTheWire));
    Delivery late = tracker.start(starting, round);  // its future is not attached yet
    CompletableFuture<Outcome> handle = tracker.waiter(waiting);

    DeliveryTracker.Closed closed = tracker.close();

    assertEquals(List.of(onTheWire), closed.running());
    assertEquals(Map.of(waiting, handle), closed.orphans());
    assertNull(tracker.existingWaiter(waiting));
    assertTrue(tracker.attach(late, new CompletableFuture<>()), "attached after close: the caller cancels it");
    assertNull(tracker.start(order(4).id(), new Round(1)), "nothing starts after close");
    assertEquals(2, tracker.inDelivery(), "deliveries count until they end");
    assertTrue(tracker.end(late, true, true).closed());
  }

  @Test
  void sweepCompletesHandlesOfOperationsSettledElsewhere() throws Exception {
    Operation done = order(1);
    Operation queued = order(2);
    idem.execute(done, host);
    idem.enqueue(queued);
    CompletableFuture<Outcome> doneHandle = tracker.waiter(done.id());
    CompletableFuture<Outcome> queuedHandle = tracker.waiter(queued.id());
    CompletableFuture<Outcome> goneHandle = tracker.waiter(order(3).id());

    tracker.sweep();  // checks the first two (the limit)
    assertEquals(done.key(), doneHandle.getNow(null).key());
    assertFalse(queuedHandle.isDone(), "still PENDING");
    assertFalse(goneHandle.isDone(), "not checked yet");

    tracker.sweep();  // then the rest, in turn
    assertInstanceOf(IllegalStateException.class, failure(goneHandle));
    assertFalse(queuedHandle.isDone());
  }

  @Test
  void sweepLeavesOperationsInDeliveryToTheirDelivery() throws Exception {
    Operation op = order(1);
    idem.execute(op, host);
    CompletableFuture<Outcome> handle = tracker.waiter(op.id());
    Delivery d = tracker.start(op.id(), new Round(1));

    tracker.sweep();

    assertFalse(handle.isDone());
    assertSame(handle, tracker.end(d, true, true).waiter());
  }

  private static Throwable failure(CompletableFuture<?> f) {
    assertTrue(f.isCompletedExceptionally());
    Throwable[] seen = new Throwable[1];
    f.whenComplete((v, e) -> seen[0] = e);
    assertNotNull(seen[0]);
    return seen[0];
  }
}
