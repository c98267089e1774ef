package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Offline is a state, not a failure: under queued delivery (the outbox, resume), attempts that were
 * certainly not sent leave the operation PENDING, however the rounds and the breaker happen to
 * line up, and it is delivered once, with its key, when the target answers. Fake time throughout.
 */
class OutboxOfflineTest {
  /** Whether the per-host breaker is on: the outcome must not depend on it pausing delivery first. */
  enum Breaker {
    DEFAULT(CircuitBreakerSettings.ofDefaults()), DISABLED(CircuitBreakerSettings.disabled());

    final CircuitBreakerSettings settings;

    Breaker(CircuitBreakerSettings settings) {
      this.settings = settings;
    }
  }

  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, refused());

  /** Nothing listens on the target's port: every attempt is refused before a byte is written. */
  static FakeHost.Behaviour refused() {
    return (key, n, now) -> Reply.fail(new ConnectException("Connection refused"));
  }

  private IdempotentExecutor.Builder executor(Breaker breaker) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).scheduler(time.scheduler())
        .sleeper(time.sleeper()).random(() -> 0.5).circuitBreaker(breaker.settings)
        .asyncExecutor(Runnable::run);   // retries on the test thread, so that fake time runs them
  }

  private OutboxDispatcher outbox(IdempotentExecutor idem) {
    return OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build().start();
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  private OperationRecord record(OperationId id) throws Exception {
    return journal.find(id).orElseThrow();
  }

  private static Throwable failure(CompletableFuture<?> f) {
    assertTrue(f.isDone(), "not completed yet");
    return assertThrows(ExecutionException.class, f::get).getCause();
  }

  @ParameterizedTest
  @EnumSource(Breaker.class)
  void anOperationWhoseAttemptsAreRefusedStaysPendingUntilTheTargetAnswersThenIsDeliveredOnce(Breaker breaker)
      throws Exception {
    OutboxDispatcher outbox = outbox(executor(breaker).build());
    Operation op = order(1);
    CompletableFuture<Outcome> handle = outbox.submit(op);

    // The reported case: five refusals in about two seconds ended the operation FAILED.
    time.advance(Duration.ofSeconds(2));
    assertEquals(OperationState.PENDING, record(op.id()).state(), "a refused connection never ends it");
    time.advance(Duration.ofMinutes(30));

    OperationRecord offline = record(op.id());
    assertEquals(OperationState.PENDING, offline.state());
    assertNotNull(offline.nextAttemptAt(), "PENDING with a next attempt time");
    assertFalse(handle.isDone(), "queued operations wait");
    assertTrue(outbox.isOffline(), "the dispatcher backs off as a whole");
    assertTrue(offline.attempts().stream().allMatch(a -> a.classification() == Classification.SAFE));

    host.behave(FakeHost.always(201));
    time.advance(Duration.ofMinutes(2));

    assertEquals(op.key(), handle.get().key());
    assertEquals(OperationState.SUCCEEDED, record(op.id()).state());
    assertEquals(1, host.effects(), "delivered once");
    assertEquals(host.totalAttempts(), host.attempts(op.key()), "every attempt carried the operation's key");
    assertFalse(outbox.isOffline());
    outbox.close();
  }

  @Test
  void afterAFirstRoundEachLaterRoundWhileOfflineIsASingleProbe() throws Exception {
    OutboxDispatcher outbox = outbox(executor(Breaker.DISABLED).build());
    Operation op = order(1);
    outbox.submit(op);

    time.advance(Duration.ofHours(1));

    // The first round spends the policy's attempts (a blip may pass); after that, the operation is
    // known offline and each poll (at most every minute while backed off) tries it once.
    List<AttemptRecord> attempts = record(op.id()).attempts();
    assertTrue(attempts.size() <= 5 + 70, attempts.size() + " attempts in an hour offline");
    assertEquals(OperationState.PENDING, record(op.id()).state());
    outbox.close();
  }

  @ParameterizedTest
  @EnumSource(Breaker.class)
  void resumeOfARefusedOperationLeavesItPendingAndResumePendingCountsItPending(Breaker breaker) throws Exception {
    IdempotentExecutor idem = executor(breaker).build();
    Operation first = order(1);
    Operation second = order(2);
    idem.enqueue(first);
    idem.enqueue(second);

    OperationPendingException e = assertThrows(OperationPendingException.class, () -> idem.resume(first.id(), host));
    assertEquals(first.key(), e.key());
    assertEquals(OperationState.PENDING, record(first.id()).state());

    CompletableFuture<Outcome> async = idem.resumeAsync(second.id(), host);
    time.runUntilIdle();
    assertInstanceOf(OperationPendingException.class, failure(async));
    assertEquals(OperationState.PENDING, record(second.id()).state());

    time.advance(Duration.ofMinutes(1));
    List<Object> told = new ArrayList<>();
    ResumeSummary summary = idem.resumePending(Map.of("create-order", ResumeHandler.of(host, told::add, told::add)));
    assertEquals(0, summary.failed(), summary.toString());
    assertEquals(2, summary.stillPending(), summary.toString());
    assertEquals(OperationState.PENDING, record(first.id()).state());
    assertEquals(OperationState.PENDING, record(second.id()).state());
  }

  @Test
  void anInlineCallKeepsItsBoundedAttemptsAndMayEndFailed() throws Exception {
    IdempotentExecutor idem = executor(Breaker.DISABLED).build();
    Operation op = order(1);

    OperationFailedException e = assertThrows(OperationFailedException.class, () -> idem.execute(op, host));

    assertEquals(OperationState.FAILED, record(op.id()).state());
    assertEquals(5, host.attempts(op.key()), "the default policy's five attempts");
    assertTrue(e.getMessage().contains("not sent"), e.getMessage());
  }
}
