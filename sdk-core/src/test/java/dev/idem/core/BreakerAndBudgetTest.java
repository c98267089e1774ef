package dev.idem.core;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.NewOperation;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.internal.TokenBucketRetryBudget;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/** The per-host circuit breaker and retry budget, exercised through the executor on fake time. */
class BreakerAndBudgetTest {
  private static final String HOST = "api.example.com:443";

  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(503));
  private final List<IdemEvent> events = Collections.synchronizedList(new ArrayList<>());

  private IdempotentExecutor.Builder executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5).listener(events::add);
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  private <T extends IdemEvent> List<T> events(Class<T> type) {
    synchronized (events) {
      return events.stream().filter(type::isInstance).map(type::cast).toList();
    }
  }

  private OperationRecord record(Operation op) throws IdempotencyException {
    return journal.find(op.id()).orElseThrow();
  }

  @Test
  void anOpenBreakerLeavesAnInlineCallPendingWhenItsDeadlineEndsFirstAndWaitsForTheProbeWhenItDoesNot()
      throws Exception {
    CircuitBreakerSettings breaker = CircuitBreakerSettings.builder().slidingWindowSize(4).minimumCalls(4)
        .failureRatePercent(50).openFor(Duration.ofSeconds(30)).halfOpenProbes(1).build();
    IdempotentExecutor idem = executor().circuitBreaker(breaker).retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofSeconds(5)).build()).build();
    for (int i = 0; i < 4; i++) {
      Operation op = order(i);
      assertThrows(OperationFailedException.class, () -> idem.execute(op, host));
    }
    assertEquals(List.of(new IdemEvent.BreakerStateChanged(HOST, "CLOSED", "OPEN")),
        events(IdemEvent.BreakerStateChanged.class));

    Operation op = order(99);
    OperationPendingException e = assertThrows(OperationPendingException.class, () -> idem.execute(op, host));

    assertEquals(0, host.attempts(op.key()), "not attempted while the breaker is open");
    assertEquals(OperationState.PENDING, record(op).state());
    assertEquals(time.now().plus(Duration.ofMillis(30_001)), record(op).nextAttemptAt(),
        "due just after the open period");
    assertTrue(e.getMessage().contains("circuit breaker open"), e.getMessage());
    assertTrue(time.sleeperWaits().isEmpty(), "a 5 s deadline cannot cover a 30 s open period: no wait");
    assertEquals(List.of(new IdemEvent.BreakerRejected(op.id(), HOST)), events(IdemEvent.BreakerRejected.class));

    time.advance(Duration.ofSeconds(27));
    host.behave(FakeHost.always(201));
    Outcome outcome = idem.execute(op, host);

    assertEquals(List.of(Duration.ofMillis(3_001)), time.sleeperWaits(), "waited for the half-open probe");
    assertEquals(1, host.attempts(op.key()), "the half-open probe");
    assertEquals(1, outcome.attempts().size());
    assertEquals(OperationState.SUCCEEDED, record(op).state());
    assertEquals(List.of(new IdemEvent.BreakerStateChanged(HOST, "CLOSED", "OPEN"),
        new IdemEvent.BreakerStateChanged(HOST, "OPEN", "HALF_OPEN"),
        new IdemEvent.BreakerStateChanged(HOST, "HALF_OPEN", "CLOSED")), events(IdemEvent.BreakerStateChanged.class));
  }

  @Test
  void aListenerThatThrowsOnABreakersChangeOfStateChangesNothingTheBreakerDoes() throws Exception {
    CircuitBreakerSettings breaker = CircuitBreakerSettings.builder().slidingWindowSize(2).minimumCalls(2)
        .openFor(Duration.ofSeconds(10)).halfOpenProbes(1).build();
    IdempotentExecutor idem = executor().circuitBreaker(breaker).retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofSeconds(5)).build())
        .listener(e -> {
          events.add(e);
          if (e instanceof IdemEvent.BreakerStateChanged) {
            throw new IllegalStateException("listener broken");
          }
        }).build();
    Operation first = order(1);
    Operation second = order(2);
    assertThrows(OperationFailedException.class, () -> idem.execute(first, host));
    assertThrows(OperationFailedException.class, () -> idem.execute(second, host), "FAILED, not the listener's");
    assertEquals(OperationState.FAILED, record(second).state());

    Operation next = order(3);
    assertThrows(OperationPendingException.class, () -> idem.execute(next, host), "the breaker opened");
    assertEquals(0, host.attempts(next.key()));
    time.advance(Duration.ofMillis(10_001));
    host.behave(FakeHost.always(201));
    idem.execute(next, host);
    assertEquals(List.of("CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>CLOSED"),
        events(IdemEvent.BreakerStateChanged.class).stream().map(c -> c.from() + ">" + c.to()).toList(),
        "each change told once, despite the throws");
  }

  @Test
  void aFailedProbeOpensTheBreakerAgain() throws Exception {
    CircuitBreakerSettings breaker = CircuitBreakerSettings.builder().slidingWindowSize(2).minimumCalls(2)
        .openFor(Duration.ofSeconds(10)).halfOpenProbes(1).build();
    IdempotentExecutor idem = executor().circuitBreaker(breaker).retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofSeconds(5)).build()).build();
    assertThrows(OperationFailedException.class, () -> idem.execute(order(1), host));
    assertThrows(OperationFailedException.class, () -> idem.execute(order(2), host));

    time.advance(Duration.ofMillis(10_001));
    assertThrows(OperationFailedException.class, () -> idem.execute(order(3), host));

    assertEquals(List.of("CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>OPEN"),
        events(IdemEvent.BreakerStateChanged.class).stream().map(c -> c.from() + ">" + c.to()).toList());
    Operation next = order(4);
    assertThrows(OperationPendingException.class, () -> idem.execute(next, host));
    assertEquals(0, host.attempts(next.key()));
  }

  @Test
  void retriesNeedTheBudgetButFirstAttemptsDoNotAndSuccessesRefundIt() throws Exception {
    TokenBucketRetryBudget budget = new TokenBucketRetryBudget(10, 5, 1, 0.0, time.clock());  // two retries
    IdempotentExecutor idem = executor().circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(budget)
        .retryPolicy(RetryPolicy.builder().maxAttempts(5).build()).build();
    Operation a = order(1);
    Set<IdempotencyKey> down = ConcurrentHashMap.newKeySet();
    down.add(a.key());
    host.behave((key, n, now) -> down.contains(key) ? Reply.status(503) : Reply.status(201));

    OperationPendingException e = assertThrows(OperationPendingException.class, () -> idem.execute(a, host));

    assertEquals(3, host.attempts(a.key()), "the first attempt and two budgeted retries");
    assertEquals(0.0, budget.tokens(HOST));
    assertEquals(List.of(new IdemEvent.BudgetDenied(a.id(), HOST)), events(IdemEvent.BudgetDenied.class));
    assertEquals(3, events(IdemEvent.RetryScheduled.class).size(), "the third retry was scheduled, then denied");
    assertEquals(OperationState.PENDING, record(a).state(), "a denied retry leaves the operation PENDING");
    assertTrue(record(a).nextAttemptAt().isAfter(time.now()));
    assertTrue(e.getMessage().contains("retry budget"), e.getMessage());

    for (int i = 0; i < 5; i++) {
      Operation b = order(10 + i);
      idem.execute(b, host);  // a first attempt needs no token, even with the budget empty
      assertEquals(1, host.attempts(b.key()));
    }
    assertEquals(5.0, budget.tokens(HOST), "each success refunded one token");

    down.clear();
    time.advance(Duration.ofSeconds(10));
    Outcome outcome = idem.execute(a, host);

    assertEquals(4, host.attempts(a.key()));
    assertEquals(4, outcome.attempts().size());
    assertEquals(5.0, budget.tokens(HOST), "the retry cost 5, and its success gave the 5 back");
  }

  /**
   * After a crash, every operation the dead process held comes back with an ambiguous attempt, so
   * each resend is a retry. Against a host that answers them, the budget must not trickle them out
   * at its refill rate: before successful retries gave their cost back, the default budget let
   * 100 through and held the other 200 for minutes (seen in the crash-loop test).
   */
  @Test
  void resumingWhatACrashLeftInFlightIsNotThrottledWhileTheHostAnswers() throws Exception {
    IdempotentExecutor idem = executor().circuitBreaker(CircuitBreakerSettings.disabled())
        .retryBudget(RetryBudget.tokenBucket(time.clock())).build();
    host.behave((key, n, now) -> Reply.status(201));
    List<Operation> ops = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      Operation op = order(i);
      ops.add(op);
      journal.begin(new NewOperation(op.id(), null, Fingerprinter.defaults().fingerprint(op.request()), op.request(),
          time.now()));
      journal.claim(op.id(), "the-dead-process", time.now(), Duration.ofSeconds(30)).orElseThrow();
    }
    time.advance(Duration.ofMinutes(1));

    ResumeSummary summary = idem.resumePending(Map.of("create-order", ResumeHandler.of(host, o -> { }, f -> { })));

    assertEquals(300, summary.succeeded(), summary.toString());
    for (Operation op : ops) {
      assertEquals(1, host.attempts(op.key()));
      assertTrue(record(op).attempts().get(0).isAmbiguous(), "the dead process's attempt counts as ambiguous");
    }
    assertEquals(0, events(IdemEvent.BudgetDenied.class).size());
  }

  @Test
  void aQueuedOperationDeniedByTheBudgetIsDeliveredLaterWithTheSameKey() throws Exception {
    IdempotentExecutor idem = executor().circuitBreaker(CircuitBreakerSettings.disabled())
        .retryBudget(RetryBudget.tokenBucket(5, 5, 1, 0.5, time.clock())).build();
    host.behave((key, n, now) -> n <= 2 ? Reply.status(503) : Reply.status(201));
    dev.idem.core.outbox.OutboxDispatcher outbox = dev.idem.core.outbox.OutboxDispatcher.builder(idem)
        .clock(time.clock()).scheduler(time.scheduler()).registerAsync("create-order", host).build().start();
    Operation op = order(1);

    var handle = outbox.submit(op);
    time.advance(Duration.ofSeconds(1));
    assertFalse(handle.isDone());
    assertEquals(2, host.attempts(op.key()));
    assertEquals(1, events(IdemEvent.BudgetDenied.class).size());
    assertEquals(OperationState.PENDING, record(op).state());

    time.advance(Duration.ofSeconds(30));

    assertTrue(handle.isDone());
    assertEquals(op.key(), handle.get().key());
    assertEquals(3, host.attempts(op.key()));
    outbox.close();
  }
}
