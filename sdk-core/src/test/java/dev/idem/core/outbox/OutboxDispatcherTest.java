package dev.idem.core.outbox;

import dev.idem.core.spi.ForwardingJournal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class OutboxDispatcherTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  private IdempotentExecutor.Builder executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run)
        .sleeper(time.sleeper()).random(() -> 0.5);
  }

  private OutboxDispatcher.Builder outbox(IdempotentExecutor idem) {
    return OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host);
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  private OperationState state(OperationId id) throws Exception {
    return journal.find(id).orElseThrow().state();
  }

  /** The failure of a future that must already be done: tests never block on one. */
  private static Throwable failure(CompletableFuture<?> f) {
    assertTrue(f.isDone(), "not completed yet");
    ExecutionException e = assertThrows(ExecutionException.class, f::get);
    return e.getCause();
  }

  /** The value of a future that must already be done. */
  private static <T> T done(CompletableFuture<T> f) throws Exception {
    assertTrue(f.isDone(), "not completed yet");
    return f.get();
  }

  @Test
  void aSubmitThatRacesCloseFailsAsPendingInsteadOfReturningAHandleThatNeverCompletes() throws Exception {
    java.util.concurrent.atomic.AtomicReference<OutboxDispatcher> outbox = new java.util.concurrent.atomic.AtomicReference<>();
    // close() lands while submit is writing the journal: the worst moment for the handle.
    dev.idem.core.spi.Journal closing = new dev.idem.core.spi.ForwardingJournal(journal) {
      @Override
      public dev.idem.core.spi.BeginResult begin(dev.idem.core.spi.NewOperation op) throws dev.idem.core.IdempotencyException {
        dev.idem.core.spi.BeginResult r = super.begin(op);
        outbox.get().close();
        return r;
      }
    };
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(closing).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    outbox.set(outbox(idem).build().start());
    Operation op = order(1);

    CompletableFuture<Outcome> handle = outbox.get().submit(op);

    assertTrue(failure(handle) instanceof dev.idem.core.OperationPendingException, String.valueOf(failure(handle)));
    assertEquals(OperationState.PENDING, state(op.id()), "journaled, and left for the next dispatcher");
    assertEquals(0, host.totalAttempts());
  }

  @Test
  void submitJournalsAtOnceAndDeliversInTheBackground() throws Exception {
    List<Outcome> seen = new ArrayList<>();
    OutboxDispatcher outbox = OutboxDispatcher.builder(executor().build()).clock(time.clock())
        .scheduler(time.scheduler()).registerAsync("create-order", host, seen::add, e -> {}).build().start();
    Operation op = order(1);

    CompletableFuture<Outcome> handle = outbox.submit(op);

    assertFalse(handle.isDone(), "submit returns before delivery");
    assertEquals(OperationState.PENDING, state(op.id()), "journaled before submit returned");
    assertEquals(0, host.totalAttempts());
    time.advance(Duration.ZERO);
    assertEquals(op.key(), done(handle).key());
    assertEquals(1, host.attempts(op.key()));
    assertEquals(OperationState.SUCCEEDED, state(op.id()));
    assertEquals(1, seen.size(), "the success callback ran once");
    outbox.close();
  }

  @Test
  void aNewDispatcherDeliversWhatAnEarlierProcessLeftInTheJournal() throws Exception {
    IdempotentExecutor before = executor().owner("old-process").build();
    List<Operation> ops = new ArrayList<>();
    for (int i = 0; i < 250; i++) {
      Operation op = order(i);
      before.enqueue(op);
      ops.add(op);
    }
    // One operation was on the wire when the old process died: IN_FLIGHT under a lease.
    Operation orphan = order(999);
    before.enqueue(orphan);
    journal.claim(orphan.id(), "old-process", time.now(), Duration.ofMinutes(2));

    OutboxDispatcher outbox = outbox(executor().owner("new-process").build()).maxInFlight(64).pageSize(50)
        .build().start();
    CompletableFuture<Outcome> orphanHandle = outbox.await(orphan.id());
    time.advance(Duration.ofSeconds(10));

    for (Operation op : ops) {
      assertEquals(OperationState.SUCCEEDED, state(op.id()));
      assertEquals(1, host.attempts(op.key()));
    }
    assertFalse(orphanHandle.isDone(), "a live lease is respected");
    assertEquals(0, host.attempts(orphan.key()));

    time.advance(Duration.ofMinutes(2));
    assertEquals(orphan.key(), done(orphanHandle).key());
    assertEquals(1, host.attempts(orphan.key()));
    outbox.close();
  }

  @Test
  void noMoreThanMaxInFlightOperationsAreInDeliveryAtOnce() throws Exception {
    host.latency(Duration.ofMillis(100));
    OutboxDispatcher outbox = outbox(executor().build()).maxInFlight(3).build().start();
    List<CompletableFuture<Outcome>> handles = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      handles.add(outbox.submit(order(i)));
    }
    time.advance(Duration.ZERO);
    assertEquals(3, outbox.inDelivery());

    time.advance(Duration.ofSeconds(1));

    for (CompletableFuture<Outcome> h : handles) {
      assertTrue(h.isDone() && !h.isCompletedExceptionally());
    }
    assertEquals(3, host.maxConcurrent());
    assertEquals(10, host.totalAttempts());
    outbox.close();
  }

  @Test
  void backsOffAsAWholeWhileTheTargetIsDownAndCatchesUpWhenItReturns() throws Exception {
    host.behave(FakeHost.always(503));
    CountingJournal counting = new CountingJournal(journal);
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(counting).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).pollInterval(Duration.ofSeconds(1))
        .maxPollInterval(Duration.ofSeconds(60)).build().start();
    List<CompletableFuture<Outcome>> handles = new ArrayList<>();
    List<OperationId> ids = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      Operation op = order(i);
      ids.add(op.id());
      handles.add(outbox.submit(op));
    }

    time.advance(Duration.ofMinutes(10));

    assertTrue(outbox.isOffline());
    assertEquals(Duration.ofSeconds(60), outbox.currentPollInterval(), "the poll interval grew to its cap");
    assertTrue(counting.findDueCalls < 40, "no busy loop: " + counting.findDueCalls + " polls in 10 minutes");
    assertTrue(host.totalAttempts() < 60, "the breaker held attempts back: " + host.totalAttempts());
    for (OperationId id : ids) {
      assertEquals(OperationState.PENDING, state(id), "never FAILED while the host is down");
    }
    handles.forEach(h -> assertFalse(h.isDone(), "queued operations wait"));

    host.behave(FakeHost.always(201));
    time.advance(Duration.ofMinutes(5));

    for (CompletableFuture<Outcome> h : handles) {
      assertTrue(h.isDone() && !h.isCompletedExceptionally());
    }
    assertFalse(outbox.isOffline());
    assertEquals(Duration.ofSeconds(1), outbox.currentPollInterval(), "progress resets the interval");
    assertEquals(30, host.effects());
    outbox.close();
  }

  @Test
  void anInlineCallerLeftPendingByAnEmptyBudgetCanAwaitTheQueuedDelivery() throws Exception {
    // One retry's worth of tokens, refilled at 1 token per second.
    IdempotentExecutor idem = executor().circuitBreaker(CircuitBreakerSettings.disabled())
        .retryBudget(RetryBudget.tokenBucket(5, 5, 1, 1.0, time.clock())).build();
    host.behave((key, n, now) -> n <= 2 ? Reply.status(503) : Reply.status(201));
    OutboxDispatcher outbox = outbox(idem).build().start();
    Operation op = order(1);

    OperationPendingException pending = assertThrows(OperationPendingException.class, () -> idem.execute(op, host));
    assertTrue(pending.getMessage().contains("OutboxDispatcher.await(id)"), pending.getMessage());
    assertEquals(2, host.attempts(op.key()), "the first attempt and one budgeted retry");
    assertEquals(OperationState.PENDING, state(op.id()));

    CompletableFuture<Outcome> handle = outbox.await(pending.operationId());
    assertFalse(handle.isDone());
    time.advance(Duration.ofSeconds(30));

    Outcome outcome = done(handle);
    assertEquals(op.key(), outcome.key());
    assertEquals(3, host.attempts(op.key()), "delivered later with the same key");
    outbox.close();
  }

  @Test
  void awaitOnATerminalOperationCompletesAtOnceAndOnAnUnknownOneFails() throws Exception {
    IdempotentExecutor idem = executor().build();
    Operation op = order(1);
    idem.execute(op, host);
    OutboxDispatcher outbox = outbox(idem).build();

    assertEquals(op.key(), done(outbox.await(op.id())).key());
    assertInstanceOf(IllegalArgumentException.class, failure(outbox.await(order(2).id())));
    outbox.close();
  }

  @Test
  void anOperationDeliveredElsewhereCompletesItsHandleAtTheNextPoll() throws Exception {
    IdempotentExecutor idem = executor().build();
    OutboxDispatcher outbox = outbox(idem).build();
    Operation op = order(1);
    CompletableFuture<Outcome> handle = outbox.submit(op);  // not started: nothing delivers it

    idem.execute(op, host);  // an inline caller delivers it instead
    outbox.start();
    time.advance(Duration.ZERO);

    assertEquals(op.key(), done(handle).key());
    assertEquals(1, host.attempts(op.key()));
    outbox.close();
  }

  @Test
  void shutdownDrainsTheQueue() throws Exception {
    host.latency(Duration.ofMillis(100));
    OutboxDispatcher outbox = outbox(executor().build()).maxInFlight(2).build().start();
    List<CompletableFuture<Outcome>> handles = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      handles.add(outbox.submit(order(i)));
    }

    CompletableFuture<Boolean> drained = outbox.shutdown(Duration.ofSeconds(10));
    assertInstanceOf(IllegalStateException.class, failure(outbox.submit(order(9))));
    time.advance(Duration.ofSeconds(1));

    assertTrue(done(drained));
    handles.forEach(h -> assertTrue(h.isDone() && !h.isCompletedExceptionally()));
    assertEquals(5, host.effects());
  }

  @Test
  void shutdownThatTimesOutLeavesOperationsPendingAndNothingHalfWritten() throws Exception {
    host.behave(FakeHost.always(503));
    OutboxDispatcher outbox = outbox(executor().build()).build().start();
    List<Operation> ops = new ArrayList<>();
    List<CompletableFuture<Outcome>> handles = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      Operation op = order(i);
      ops.add(op);
      handles.add(outbox.submit(op));
    }

    CompletableFuture<Boolean> drained = outbox.shutdown(Duration.ofSeconds(5));
    time.advance(Duration.ofSeconds(5));

    assertFalse(done(drained));
    for (Operation op : ops) {
      assertEquals(OperationState.PENDING, state(op.id()));
    }
    handles.forEach(h -> assertInstanceOf(OperationPendingException.class, failure(h)));
    int attempts = host.totalAttempts();
    time.advance(Duration.ofMinutes(5));
    assertEquals(attempts, host.totalAttempts(), "a stopped dispatcher sends nothing");
  }

  @Test
  void closeWithAnAttemptOnTheWireRecordsItAndLeavesTheOperationPendingForTheNextDispatcher() throws Exception {
    host.behave((key, n, now) -> n == 1 ? Reply.hang() : Reply.status(201));
    OutboxDispatcher outbox = outbox(executor().build()).build().start();
    Operation op = order(1);
    CompletableFuture<Outcome> handle = outbox.submit(op);
    time.advance(Duration.ZERO);
    assertEquals(OperationState.IN_FLIGHT, state(op.id()));

    outbox.close();
    assertInstanceOf(OperationPendingException.class, failure(handle));
    host.held().get(0).complete(FakeHost.response(201, java.util.Map.of()));  // the late answer

    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertEquals(OperationState.PENDING, r.state());
    assertEquals(1, r.attempts().size());
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification());

    OutboxDispatcher next = outbox(executor().build()).build().start();
    time.advance(Duration.ZERO);
    Outcome outcome = done(next.await(op.id()));
    assertEquals(op.key(), outcome.key(), "the second attempt reused the key");
    assertEquals(2, host.attempts(op.key()));
    next.close();
  }

  @Test
  void closeDuringBackoffLeavesThePendingOperationAlone() throws Exception {
    host.behave((key, n, now) -> n == 1 ? Reply.status(503) : Reply.status(201));
    OutboxDispatcher outbox = outbox(executor().build()).build().start();
    Operation op = order(1);
    outbox.submit(op);
    time.advance(Duration.ZERO);
    assertEquals(1, host.attempts(op.key()));

    outbox.close();
    time.advance(Duration.ofMinutes(1));

    assertEquals(1, host.attempts(op.key()), "the cancelled retry was never sent");
    assertEquals(OperationState.PENDING, state(op.id()));
  }

  @Test
  void aSynchronousTransportRunsOnTheWorkersAndFailuresReachTheCallback() throws Exception {
    host.behave(FakeHost.always(400));
    List<OperationException> failures = new ArrayList<>();
    OutboxDispatcher outbox = OutboxDispatcher.builder(executor().build()).clock(time.clock())
        .scheduler(time.scheduler()).workers(Runnable::run)
        .register("create-order", (dev.idem.core.spi.Transport) host, o -> {}, failures::add).build().start();
    Operation op = order(1);

    CompletableFuture<Outcome> handle = outbox.submit(op);
    time.advance(Duration.ZERO);

    OperationException e = assertInstanceOf(OperationException.class, failure(handle));
    assertEquals(OperationState.FAILED, e.state());
    assertEquals(1, failures.size());
    assertFalse(outbox.isOffline(), "a permanent answer proves the target is reachable");
    outbox.close();
  }

  @Test
  void anOperationPendingPastItsAgeLimitIsNotResentBlindly() throws Exception {
    IdempotentExecutor idem = executor().serverKeyRetention(Duration.ofHours(1)).build();
    Operation op = order(1);
    idem.enqueue(op);  // then the process was down for two hours
    journal.claim(op.id(), "a-process-that-died", time.now(), Duration.ofMinutes(2));  // mid-attempt
    time.advance(Duration.ofHours(2));

    OutboxDispatcher outbox = outbox(idem).build().start();
    CompletableFuture<Outcome> handle = outbox.await(op.id());
    time.advance(Duration.ZERO);

    assertInstanceOf(dev.idem.core.OperationUncertainException.class, failure(handle));
    assertEquals(0, host.attempts(op.key()));
    assertEquals(OperationState.UNCERTAIN, state(op.id()));
    outbox.close();
  }

  @Test
  void submitRefusesAnUnregisteredOperationName() {
    OutboxDispatcher outbox = outbox(executor().build()).build();
    Operation op = Operation.builder("refund", Requests.order("{}")).build();
    assertThrows(IllegalArgumentException.class, () -> outbox.submit(op));
    outbox.close();
  }

  /** What a caller that journals for this dispatcher alone (the Spring interceptor's enqueue) checks names against. */
  @Test
  void operationNamesAreTheRegisteredOnesAndImmutable() {
    OutboxDispatcher outbox = outbox(executor().build()).registerAsync("refund", host).build();
    assertEquals(java.util.Set.of("create-order", "refund"), outbox.operationNames());
    assertThrows(UnsupportedOperationException.class, () -> outbox.operationNames().add("other"));
    outbox.close();
  }

  /** Counts polls of the journal; everything else passes through. */
  static final class CountingJournal extends ForwardingJournal {
    int findDueCalls;

    CountingJournal(Journal delegate) {
      super(delegate);
    }

    @Override
    public synchronized List<OperationRecord> findDue(java.time.Instant now, OperationId after, int limit)
        throws dev.idem.core.IdempotencyException {
      findDueCalls++;
      return super.findDue(now, after, limit);
    }
  }
}
