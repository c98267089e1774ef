package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The circuit breaker at its defaults (no breaker, budget or lease setting changed): it must never
 * block the idempotency protocol, and an operation it leaves PENDING must still be delivered.
 */
class BreakerDefaultsTest {
  private static final String HOST = "api.example.com:443";

  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final List<IdemEvent> events = Collections.synchronizedList(new ArrayList<>());
  /** Server-side effects per key, counted when the server commits, whether or not the client hears. */
  private final Map<IdempotencyKey, AtomicInteger> effects = new ConcurrentHashMap<>();

  /** Defaults, but for virtual time and fixed jitter. */
  private IdempotentExecutor.Builder defaults() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5).listener(events::add);
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  private OperationState state(Operation op) throws IdempotencyException {
    return journal.find(op.id()).orElseThrow().state();
  }

  private List<String> breakerTransitions() {
    synchronized (events) {
      return events.stream().filter(IdemEvent.BreakerStateChanged.class::isInstance)
          .map(IdemEvent.BreakerStateChanged.class::cast).map(c -> c.from() + ">" + c.to()).toList();
    }
  }

  /** The first attempt of every key commits and its response is lost; a later one gets the stored result. */
  private FakeHost.Behaviour commitThenDropResponse() {
    return (key, n, now) -> {
      if (n == 1) {
        effects.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
        return Reply.fail(new SocketTimeoutException("Read timed out"));
      }
      return Reply.status(201, Map.of("Idempotent-Replayed", "true"));
    };
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void fortyLostResponsesAtDefaultsEndFortySucceededWithOneEffectEach(Driver d) throws Exception {
    IdempotentExecutor idem = defaults().build();
    FakeHost host = new FakeHost(time, commitThenDropResponse());
    List<Operation> ops = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      ops.add(order(i));
    }

    List<Outcome> outcomes = new ArrayList<>();
    for (Operation op : ops) {
      if (d == Driver.SYNC) {
        outcomes.add(idem.execute(op, host));
      } else {
        CompletableFuture<Outcome> f = idem.executeAsync(op, host);
        time.runUntilIdle();
        outcomes.add(Driver.join(f));
      }
    }

    for (int i = 0; i < ops.size(); i++) {
      Operation op = ops.get(i);
      assertEquals(OperationState.SUCCEEDED, state(op), "operation " + i);
      assertEquals(1, effects.get(op.key()).get(), "one effect for operation " + i);
      assertEquals(2, host.attempts(op.key()), "the lost attempt and its keyed retry, operation " + i);
      assertTrue(outcomes.get(i).replayed(), "the server replayed the stored result, operation " + i);
    }
    assertEquals(List.of(), breakerTransitions(), "lost responses of keyed attempts are not host failures");
  }

  @Test
  void conflictsFromTwoInstancesSharingKeysNeverOpenTheBreaker() throws Exception {
    IdempotentExecutor idem = defaults().build();
    // The other instance's request with the same key is still running for each operation's first
    // three attempts; then the server has the result.
    FakeHost host = new FakeHost(time, (key, n, now) -> n <= 3 ? Reply.status(409) : Reply.status(201));

    for (int i = 0; i < 30; i++) {
      Operation op = order(i);
      idem.execute(op, host);
      assertEquals(OperationState.SUCCEEDED, state(op));
      assertEquals(4, host.attempts(op.key()));
    }
    assertEquals(List.of(), breakerTransitions(), "409 in flight is the protocol working, not a failing host");
    assertEquals(30, host.effects());
  }

  @Test
  void ambiguousFailuresAloneNeverOpenTheBreaker() throws Exception {
    IdempotentExecutor idem = defaults().build();
    FakeHost host = new FakeHost(time, (key, n, now) -> Reply.fail(new SocketTimeoutException("Read timed out")));

    for (int i = 0; i < 12; i++) {
      Operation op = order(i);
      assertThrows(OperationUncertainException.class, () -> idem.execute(op, host));
    }
    assertEquals(List.of(), breakerTransitions());
    assertEquals(12 * 5, host.totalAttempts(), "every operation spent its five attempts; none was held back");
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 502, 503, 504})
  void refusedConnectionsAndGatewayErrorsOpenTheBreaker(int status) throws Exception {
    IdempotentExecutor idem = defaults().retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    FakeHost host = new FakeHost(time, (key, n, now) -> status == 0
        ? Reply.fail(new ConnectException("Connection refused")) : Reply.status(status));

    // A gateway's 502 or 504 may follow the backend's effect: the operation ends UNCERTAIN, but
    // the host is down all the same.
    Class<? extends OperationException> ending = status == 502 || status == 504
        ? OperationUncertainException.class : OperationFailedException.class;
    for (int i = 0; i < 10; i++) {
      Operation op = order(i);
      assertThrows(ending, () -> idem.execute(op, host));
    }

    assertEquals(List.of("CLOSED>OPEN"), breakerTransitions(), "ten of ten counted attempts failed");
  }

  @ParameterizedTest
  @ValueSource(ints = {500, 429, 404})
  void otherAnswersDoNotOpenTheBreaker(int status) throws Exception {
    IdempotentExecutor idem = defaults().retryPolicy(RetryPolicy.builder().maxAttempts(1).build())
        .retryBudget(RetryBudget.unlimited()).build();
    FakeHost host = new FakeHost(time, FakeHost.always(status));

    // A 500 may follow the effect (UNCERTAIN), but says nothing about the host's health.
    Class<? extends OperationException> ending = status == 500
        ? OperationUncertainException.class : OperationFailedException.class;
    for (int i = 0; i < 20; i++) {
      Operation op = order(i);
      assertThrows(ending, () -> idem.execute(op, host));
    }

    assertEquals(List.of(), breakerTransitions());
  }

  /** Opens the default breaker with ten refused connections, one attempt each. */
  private void openTheBreaker(IdempotentExecutor idem, FakeHost host) {
    RetryPolicy once = RetryPolicy.builder().maxAttempts(1).build();
    host.behave((key, n, now) -> Reply.fail(new ConnectException("Connection refused")));
    for (int i = 0; i < 10; i++) {
      Operation op = Operation.builder("warm-up", Requests.order("{\"w\":" + i + "}")).policy(once).build();
      assertThrows(OperationFailedException.class, () -> idem.execute(op, host));
    }
    assertEquals(List.of("CLOSED>OPEN"), breakerTransitions());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void anInlineCallRefusedByTheOpenBreakerWaitsForTheHalfOpenProbe(Driver d) throws Exception {
    IdempotentExecutor idem = defaults().build();
    FakeHost host = new FakeHost(time, FakeHost.always(201));
    openTheBreaker(idem, host);
    host.behave(FakeHost.always(201));
    time.jump(Duration.ofSeconds(4));  // the breaker opened 4 s ago; the default open period is 10 s
    Operation op = order(1);
    int waitsBefore = time.sleeps().size();

    Outcome out;
    if (d == Driver.SYNC) {
      out = idem.execute(op, host);
    } else {
      CompletableFuture<Outcome> f = idem.executeAsync(op, host);
      assertFalse(f.isDone(), "waiting, not failed at once");
      time.runUntilIdle();
      out = Driver.join(f);
    }

    assertEquals(List.of(Duration.ofMillis(6_001)), time.sleeps().subList(waitsBefore, time.sleeps().size()),
        "waited for the rest of the open period, then was the probe");
    assertEquals(1, host.attempts(op.key()));
    assertEquals(1, out.attempts().size());
    assertEquals(OperationState.SUCCEEDED, state(op));
    assertEquals(List.of("CLOSED>OPEN", "OPEN>HALF_OPEN"), breakerTransitions().subList(0, 2));
    assertTrue(events.contains(new IdemEvent.BreakerRejected(op.id(), HOST)));
  }

  @Test
  void whatTheBreakerLeavesPendingTheOutboxDispatcherDeliversWithTheSameKey() throws Exception {
    IdempotentExecutor idem = defaults().build();
    FakeHost host = new FakeHost(time, FakeHost.always(201));
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build().start();
    try {
      openTheBreaker(idem, host);
      // A caller whose own deadline (think OkHttp's callTimeout) cannot cover the open period.
      Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}"))
          .policy(RetryPolicy.builder().deadline(Duration.ofSeconds(2)).build()).build();

      OperationPendingException e = assertThrows(OperationPendingException.class, () -> idem.execute(op, host));
      assertEquals(OperationState.PENDING, state(op));
      assertEquals(0, host.attempts(op.key()), "nothing was sent");
      assertTrue(e.getMessage().contains("OutboxDispatcher"), e.getMessage());

      host.behave(FakeHost.always(201));
      CompletableFuture<Outcome> delivered = outbox.await(op.id());
      time.advance(Duration.ofSeconds(30));

      assertTrue(delivered.isDone(), "the dispatcher delivered it once the breaker let a probe through");
      assertEquals(op.key(), delivered.join().key());
      assertEquals(OperationState.SUCCEEDED, state(op));
      assertEquals(1, host.attempts(op.key()), "one send, with the journaled key");
    } finally {
      outbox.close();
    }
  }

  @Test
  void resumeDoesNotWaitForTheBreakerButLeavesTheOperationDueAfterTheOpenPeriod() throws Exception {
    IdempotentExecutor idem = defaults().build();
    FakeHost host = new FakeHost(time, FakeHost.always(201));
    openTheBreaker(idem, host);
    Operation op = order(1);
    idem.enqueue(op);
    List<OperationException> failures = new ArrayList<>();

    ResumeSummary summary = idem.resumePending(Map.of("create-order",
        ResumeHandler.of(host, o -> { }, failures::add)));

    assertEquals(1, summary.stillPending(), "a deliverer comes back on its own schedule: " + summary);
    assertTrue(time.sleeperWaits().isEmpty(), "resume never sleeps through an open period");
    assertEquals(1, failures.size());
    assertEquals(OperationState.PENDING, state(op));
    assertEquals(time.now().plus(Duration.ofMillis(10_001)), journal.find(op.id()).orElseThrow().nextAttemptAt());
  }
}
