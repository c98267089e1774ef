package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Why: an inline call (execute, executeAsync) of an operation the journal held already has an age
 * limit, but its wait for a breaker's probe was bounded only by its deadline. Refused by a half-open
 * breaker whose probe another call holds, it looks again every second; when that probe failed and
 * the breaker opened again, it waited out the whole new open period. Either wait could run past the
 * age limit, and the call only ended (FAILED, unsent) at its first claim after it: up to an open
 * period late, the operation journaled as due past its limit meanwhile. Now each wait ends at the
 * limit at the latest, and the claim there ends the operation as the age limit ends it anywhere else.
 */
class InlineProbeWaitAgeLimitTest {
  private static final Duration AGE_LIMIT = Duration.ofHours(1);
  private static final Duration OPEN_FOR = Duration.ofSeconds(10);

  private enum Driver { SYNC, ASYNC }

  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
      .owner(Harness.OWNER).serverKeyRetention(AGE_LIMIT).maxPendingAge(AGE_LIMIT)
      // One attempt per call, and a deadline far longer than the waits: only the age limit bounds them.
      .retryPolicy(RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofMinutes(5)).build())
      .circuitBreaker(CircuitBreakerSettings.builder().slidingWindowSize(2).minimumCalls(2).openFor(OPEN_FOR)
          .halfOpenProbes(1).build())
      .retryBudget(RetryBudget.unlimited()).build();

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  /** The probe fails 3 s before the limit: the breaker opens again, its period ending 7 s past the limit. */
  @ParameterizedTest
  @EnumSource(Driver.class)
  void aProbeThatFailsSendsTheWaitingCallIntoAnOpenPeriodPastTheLimit_itEndsAtTheLimit(Driver driver)
      throws Exception {
    waitForAnotherCallsProbe(driver, Duration.ofMillis(16_500));
  }

  /** The probe is still out at the limit: the call looks at the breaker every second, half a second off the limit. */
  @ParameterizedTest
  @EnumSource(Driver.class)
  void aProbeStillOutAtTheLimit_theWaitingCallEndsAtTheLimit(Driver driver) throws Exception {
    waitForAnotherCallsProbe(driver, Duration.ofSeconds(30));
  }

  /**
   * An inline call of an operation journaled before it, 19.5 s before its age limit, finds the
   * breaker half-open with its one probe held by another call, which is answered 503 after
   * {@code probeFailsAfter}.
   */
  private void waitForAnotherCallsProbe(Driver driver, Duration probeFailsAfter) throws Exception {
    Operation op = order(1);
    Instant limit = time.now().plus(AGE_LIMIT);
    idem.enqueue(op);  // journaled before the inline call: a resend, subject to the age limit

    // Two 503s open the breaker, 31.5 s before the limit; its open period ends 21.5 s before it.
    time.advance(Duration.between(time.now(), limit).minusMillis(31_500));
    FakeHost down = new FakeHost(time, FakeHost.always(503));
    assertThrows(OperationFailedException.class, () -> idem.execute(order(2), down));
    assertThrows(OperationFailedException.class, () -> idem.execute(order(3), down));

    // 19.5 s before the limit another call takes the half-open probe and holds it.
    time.advance(Duration.ofSeconds(12));
    FakeHost prober = new FakeHost(time, (k, n, t) -> Reply.hang());
    CompletableFuture<Outcome> probe = idem.executeAsync(order(4), prober);
    assertEquals(1, prober.held().size(), "the probe is out");
    time.scheduler().schedule(() -> prober.held().get(0).complete(FakeHost.response(503, Map.of())),
        probeFailsAfter);

    FakeHost up = new FakeHost(time, FakeHost.always(201));
    AtomicReference<Instant> endedAt = new AtomicReference<>();
    Throwable told;
    if (driver == Driver.SYNC) {
      told = assertThrows(OperationException.class, () -> idem.execute(op, up));
      endedAt.set(time.now());
    } else {
      CompletableFuture<Outcome> f = idem.executeAsync(op, up);
      f.whenComplete((o, e) -> endedAt.set(time.now()));
      time.runUntilIdle();
      assertTrue(f.isDone(), "not completed");
      told = assertThrows(ExecutionException.class, f::get).getCause();
    }

    time.runUntilIdle();
    assertTrue(probe.isCompletedExceptionally(), "the other call's probe failed");
    assertEquals(0, up.attempts(op.key()), "nothing sent: the breaker refused the host until past the limit");
    assertEquals(limit, endedAt.get(), "the call ends at the age limit, not at the next look at the breaker");
    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertEquals(OperationState.FAILED, r.state(), r.reason());
    assertTrue(r.reason().contains("age limit"), r.reason());
    assertEquals(0, r.attempts().size(), "no attempt recorded: none was sent");
    assertInstanceOf(OperationFailedException.class, told, told.toString());
    assertEquals(OperationState.FAILED, ((OperationException) told).state(), "the caller is told what the journal holds");
    assertEquals(0, journal.count(OperationState.IN_FLIGHT), "no claim left behind");
    assertEquals(0, journal.count(OperationState.PENDING), "nothing left for a deliverer");
  }
}
