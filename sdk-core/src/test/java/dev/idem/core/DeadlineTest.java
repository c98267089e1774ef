package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.spi.AttemptTimeoutException;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** Per-attempt timeouts and the overall deadline, on fake time. */
class DeadlineTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor(RetryPolicy policy) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5).retryPolicy(policy)
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();
  }

  private static Operation order() {
    return Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  }

  private static Throwable failure(CompletableFuture<?> f) {
    assertTrue(f.isDone(), "not completed yet");
    return assertThrows(ExecutionException.class, f::get).getCause();
  }

  @Test
  void anAttemptThatOutlivesItsTimeoutEndsAmbiguousAndIsRetriedWithTheSameKey() throws Exception {
    FakeHost host = new FakeHost(time, (key, n, now) -> n == 1 ? Reply.hang() : Reply.status(201));
    IdempotentExecutor idem = executor(RetryPolicy.builder().attemptTimeout(Duration.ofSeconds(2))
        .baseDelay(Duration.ofMillis(100)).jitter(Jitter.NONE).build());
    Operation op = order();

    CompletableFuture<Outcome> f = idem.executeAsync(op, host);
    time.advance(Duration.ofMillis(1999));
    assertFalse(f.isDone());
    assertEquals(OperationState.IN_FLIGHT, journal.find(op.id()).orElseThrow().state());
    time.advance(Duration.ofMillis(1));
    assertTrue(host.held().get(0).isCancelled(), "the timed-out attempt was cancelled");
    time.advance(Duration.ofMillis(100));

    Outcome outcome = f.get();
    assertEquals(2, host.attempts(op.key()));
    AttemptRecord first = outcome.attempts().get(0);
    assertEquals(Classification.AMBIGUOUS, first.classification());
    assertEquals(AttemptTimeoutException.class.getName(), first.exceptionClass());
    assertEquals(Duration.ofSeconds(2), Duration.between(first.startedAt(), first.endedAt()));
  }

  @Test
  void whenEveryAttemptTimesOutTheOperationIsUncertainNotFailed() throws Exception {
    FakeHost host = new FakeHost(time, (key, n, now) -> Reply.hang());
    IdempotentExecutor idem = executor(RetryPolicy.builder().maxAttempts(3).attemptTimeout(Duration.ofSeconds(1))
        .build());
    Operation op = order();

    CompletableFuture<Outcome> f = idem.executeAsync(op, host);
    time.advance(Duration.ofSeconds(30));

    assertInstanceOf(OperationUncertainException.class, failure(f));
    assertEquals(3, host.attempts(op.key()));
    assertEquals(OperationState.UNCERTAIN, journal.find(op.id()).orElseThrow().state());
  }

  @Test
  void theSchedulerNeverWaitsPastTheDeadline() throws Exception {
    FakeHost host = new FakeHost(time, FakeHost.always(503)).latency(Duration.ofMillis(50));
    IdempotentExecutor idem = executor(RetryPolicy.builder().maxAttempts(10).deadline(Duration.ofSeconds(1))
        .baseDelay(Duration.ofMillis(300)).multiplier(2).jitter(Jitter.NONE).build());
    Operation op = order();
    Instant start = time.now();

    CompletableFuture<Outcome> f = idem.executeAsync(op, host);
    time.advance(Duration.ofMinutes(1));

    assertInstanceOf(OperationFailedException.class, failure(f));
    // Attempts end at 50 ms, 400 ms; then 400 + 600 would end past the 1 s deadline.
    List<AttemptRecord> attempts = journal.find(op.id()).orElseThrow().attempts();
    assertEquals(2, attempts.size());
    assertTrue(attempts.get(1).decision().contains("deadline"), attempts.get(1).decision());
    Instant lastEnd = attempts.get(attempts.size() - 1).endedAt();
    assertTrue(!lastEnd.isAfter(start.plus(Duration.ofSeconds(1))), "ended at " + lastEnd);
    List<Duration> waits = time.scheduledDelays().stream().filter(d -> d.toMillis() >= 100).toList();
    assertEquals(List.of(Duration.ofMillis(300)), waits, "only the retry that fits was scheduled");
  }

  @Test
  void aRetryAfterHintPastTheDeadlineStopsInsteadOfSleepingBeyondIt() throws Exception {
    FakeHost host = new FakeHost(time, (k, n, now) -> Reply.status(503, Map.of("Retry-After", "5")));
    IdempotentExecutor idem = executor(RetryPolicy.builder().deadline(Duration.ofSeconds(3)).build());
    Operation op = order();

    assertThrows(OperationFailedException.class, () -> idem.execute(op, host));

    assertEquals(List.of(), time.sleeperWaits(), "no sleep at all");
    assertEquals(1, host.attempts(op.key()));
    String decision = journal.find(op.id()).orElseThrow().attempts().get(0).decision();
    assertTrue(decision.contains("Retry-After"), decision);
  }

  @Test
  void theSleeperNeverSleepsPastTheDeadlineEither() throws Exception {
    FakeHost host = new FakeHost(time, FakeHost.always(503));
    IdempotentExecutor idem = executor(RetryPolicy.builder().maxAttempts(20).deadline(Duration.ofSeconds(2))
        .baseDelay(Duration.ofMillis(200)).multiplier(2).jitter(Jitter.NONE).build());
    Operation op = order();
    Instant start = time.now();

    assertThrows(OperationFailedException.class, () -> idem.execute(op, host));

    assertEquals(List.of(Duration.ofMillis(200), Duration.ofMillis(400), Duration.ofMillis(800)), time.sleeperWaits());
    assertTrue(!time.now().isAfter(start.plus(Duration.ofSeconds(2))));
  }
}
