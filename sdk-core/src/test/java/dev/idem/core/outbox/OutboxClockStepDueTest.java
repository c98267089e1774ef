package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.RetryPolicy;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import java.net.ConnectException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A queued operation's next attempt time is journaled on the wall clock. When that clock steps back
 * (an NTP correction of an hour), an operation queued before the step holds a due time an hour
 * ahead of the new clock, and the dispatcher, which reads due times off the wall clock, kept it
 * PENDING for the whole hour although the target was back. The wait chosen for it (its journaled
 * due time minus the instant it was journaled) is waited on the scheduler (monotonic): after the
 * dispatcher's own delivery, and, for a record journaled after the clock's now (on a clock that was
 * ahead), from the poll that finds it; backoff still holds for operations written after the step,
 * and no wait is ever cut short. Virtual time throughout: the host's wall clock is the virtual time plus {@code step}.
 */
class OutboxClockStepDueTest extends WallClockStepFixture {
  /** The default retry policy's maxDelay: how long a round that was not sent waits before the next. */
  private static final Duration BACKOFF = Duration.ofSeconds(10);

  OutboxClockStepDueTest() {
    super(refused());
  }

  private static FakeHost.Behaviour refused() {
    return (key, n, now) -> Reply.fail(new ConnectException("Connection refused"));
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  @Test
  void anOperationQueuedBeforeTheWallClockStepsBackIsDeliveredAfterItsBackoffNotAnHourLater() throws Exception {
    OutboxDispatcher outbox = outbox(executor("pod-0")).start();
    Operation op = order(1);
    CompletableFuture<Outcome> handle = outbox.submit(op);
    time.advance(Duration.ofSeconds(2));  // its first round is refused: PENDING, due again after the backoff
    OperationRecord queued = record(op);
    assertEquals(OperationState.PENDING, queued.state());
    assertNotNull(queued.nextAttemptAt());
    assertTrue(queued.nextAttemptAt().isAfter(wall.instant()), "due again in the future: " + queued.nextAttemptAt());
    int refusedAttempts = host.totalAttempts();

    step = Duration.ofHours(-1);  // NTP steps the host's clock back an hour
    host.behave(FakeHost.always(201));
    time.advance(BACKOFF.plusSeconds(3));

    assertEquals(1, host.effects(), "the target is back and the operation's backoff has passed, but its due time"
        + " was journaled on the clock before the step: it waits the hour out");
    assertEquals(refusedAttempts + 1, host.totalAttempts(), "one attempt once due, none before");
    assertEquals(host.totalAttempts(), host.attempts(op.key()), "every attempt carried the operation's key");
    assertEquals(OperationState.SUCCEEDED, record(op).state());
    assertTrue(handle.isDone());
    assertEquals(op.key(), handle.get().key());
    outbox.close();
  }

  @Test
  void whileTheTargetStaysDownAnOperationQueuedBeforeTheStepIsTriedOncePerBackoffNotOnEveryPoll() throws Exception {
    OutboxDispatcher outbox = outbox(executor("pod-0")).start();
    Operation op = order(1);
    outbox.submit(op);
    time.advance(Duration.ofSeconds(2));
    int afterFirstRound = host.totalAttempts();

    step = Duration.ofHours(-1);
    time.advance(Duration.ofMinutes(1));

    // A probe per backoff (10 s) in a minute, give or take the poll it waits for; a hot loop (once
    // per poll, every second) would make it 60.
    int probes = host.totalAttempts() - afterFirstRound;
    assertTrue(probes >= 4 && probes <= 7, probes + " probes in a minute offline after the step");
    assertEquals(OperationState.PENDING, record(op).state());

    host.behave(FakeHost.always(201));
    time.advance(BACKOFF.plusSeconds(3));
    assertEquals(1, host.effects());
    assertEquals(OperationState.SUCCEEDED, record(op).state());
    outbox.close();
  }

  @Test
  void anOperationAnotherInstanceQueuedAgainMeanwhileWaitsThatInstancesBackoff() throws Exception {
    OutboxDispatcher outbox = outbox(executor("pod-0")).start();
    Operation op = order(1);
    outbox.submit(op);
    time.advance(Duration.ofSeconds(2));  // refused: PENDING, and this dispatcher's wait of 10 s begins
    step = Duration.ofHours(-1);
    time.advance(Duration.ofSeconds(3));

    // Another instance sends it meanwhile, refused too: PENDING again, due after its own backoff,
    // on the stepped clock.
    IdempotentExecutor other = executor("pod-1");
    assertThrows(OperationPendingException.class, () -> other.resume(op.id(), host));
    Instant otherDue = record(op).nextAttemptAt();
    assertTrue(otherDue.isAfter(wall.instant().plus(BACKOFF).minusSeconds(1)), otherDue + " vs " + wall.instant());
    int attempts = host.totalAttempts();

    host.behave(FakeHost.always(201));
    while (wall.instant().isBefore(otherDue.minusSeconds(1))) {
      time.advance(Duration.ofMillis(500));
      assertEquals(attempts, host.totalAttempts(), "the wait this dispatcher kept ended, but the operation was"
          + " queued again since, due at " + otherDue + "; sent at " + wall.instant());
    }
    time.advance(Duration.ofSeconds(3));
    assertEquals(1, host.effects());
    assertEquals(OperationState.SUCCEEDED, record(op).state());
    outbox.close();
    other.close();
  }

  /**
   * The wait this dispatcher keeps on its scheduler after its own delivery ends PENDING is the one
   * the journal's writer chose, however long. Here the delivery joined (single-flight) an inline
   * call of the same executor whose own policy has a maxDelay of 10 min; that call's retry found
   * the host's retry budget empty, so it left the operation PENDING for its policy's maxDelay,
   * sixty times the executor's default. No clock step anywhere: it must not be sent before then,
   * even though the budget has refilled meanwhile.
   */
  @Test
  void anOperationThisDispatcherDeliveredIsNotSentBeforeTheLongerWaitItsOwnPolicyChose() throws Exception {
    AtomicBoolean budgetEmpty = new AtomicBoolean();
    RetryBudget budget = new RetryBudget() {
      @Override
      public boolean tryAcquireRetry(String h) {
        return !budgetEmpty.get();
      }

      @Override
      public void onSuccess(String h) {}
    };
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).owner("pod-0").clock(wall)
        .scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5)
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(budget).asyncExecutor(Runnable::run).build();
    OutboxDispatcher outbox = outbox(idem).start();
    host.behave((key, n, now) -> n == 1 ? Reply.hang() : Reply.status(201));
    RetryPolicy patient = RetryPolicy.builder().maxDelay(Duration.ofMinutes(10)).deadline(Duration.ofMinutes(30))
        .build();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).policy(patient).build();
    CompletableFuture<Outcome> inline = idem.executeAsync(op, host);
    time.advance(Duration.ofSeconds(2));  // the dispatcher's polls find the operation and join the call
    assertEquals(1, host.totalAttempts());

    budgetEmpty.set(true);
    host.held().get(0).complete(FakeHost.response(503, Map.of()));
    time.advance(Duration.ofSeconds(1));  // the call's retry is refused by the budget: PENDING
    budgetEmpty.set(false);
    assertTrue(inline.isCompletedExceptionally(), "the inline call ended PENDING");
    OperationRecord waiting = record(op);
    assertEquals(OperationState.PENDING, waiting.state());
    Instant due = waiting.nextAttemptAt();
    assertTrue(Duration.between(wall.instant(), due).compareTo(Duration.ofMinutes(9)) > 0,
        "PENDING for the operation's own maxDelay: due at " + due);
    assertEquals(1, host.totalAttempts());

    while (wall.instant().isBefore(due.minusSeconds(1))) {
      time.advance(Duration.ofSeconds(1));
      assertEquals(1, host.totalAttempts(), "sent at " + wall.instant() + ", though the journal holds it due at "
          + due + " (the wait its own policy chose for an empty retry budget); the wall clock never stepped");
    }
    time.advance(Duration.ofSeconds(3));
    assertEquals(2, host.totalAttempts(), "sent once due");
    assertEquals(host.totalAttempts(), host.attempts(op.key()), "every attempt carried the operation's key");
    assertEquals(1, host.effects());
    assertEquals(OperationState.SUCCEEDED, record(op).state());
    outbox.close();
    idem.close();
  }

  @Test
  void anOperationQueuedAfterTheStepStillWaitsItsBackoff() throws Exception {
    OutboxDispatcher outbox = outbox(executor("pod-0")).start();
    time.advance(Duration.ofSeconds(5));  // polls on the clock before the step
    step = Duration.ofHours(-1);
    time.advance(Duration.ofSeconds(5));  // and after it

    Operation op = order(1);
    outbox.submit(op);
    time.advance(Duration.ofSeconds(2));  // refused: PENDING, due after the backoff on the stepped clock
    assertEquals(OperationState.PENDING, record(op).state());
    int refusedAttempts = host.totalAttempts();

    host.behave(FakeHost.always(201));
    time.advance(BACKOFF.minusSeconds(4));
    assertEquals(refusedAttempts, host.totalAttempts(), "sent again before its backoff passed");
    assertEquals(0, host.effects());
    assertEquals(OperationState.PENDING, record(op).state());

    time.advance(Duration.ofSeconds(6));
    assertEquals(1, host.effects());
    assertEquals(refusedAttempts + 1, host.totalAttempts());
    assertEquals(host.totalAttempts(), host.attempts(op.key()));
    assertEquals(OperationState.SUCCEEDED, record(op).state());
    outbox.close();
  }

  @Test
  void afterARestartOnAClockAnHourBehindAnOperationQueuedBeforeIsDeliveredAfterItsBackoff() throws Exception {
    IdempotentExecutor before = executor("pod-0");
    OutboxDispatcher first = outbox(before).start();
    Operation op = order(1);
    first.submit(op);
    time.advance(Duration.ofSeconds(2));
    assertEquals(OperationState.PENDING, record(op).state());
    first.close();
    before.close();

    // The process restarts on a clock an hour behind: only the journaled due time is left.
    step = Duration.ofHours(-1);
    host.behave(FakeHost.always(201));
    IdempotentExecutor after = executor("pod-0");
    OutboxDispatcher second = outbox(after).start();
    time.advance(BACKOFF.plusSeconds(3));

    assertEquals(1, host.effects(), "the journaled due time lies an hour ahead of the restarted clock; the"
        + " dispatcher waits no longer than the backoff that was chosen for it");
    assertEquals(host.totalAttempts(), host.attempts(op.key()));
    assertEquals(OperationState.SUCCEEDED, record(op).state());
    second.close();
    after.close();
  }

  @Test
  void afterARestartAnOperationDueWithinTheBackoffIsNotSentEarly() throws Exception {
    IdempotentExecutor before = executor("pod-0");
    OutboxDispatcher first = outbox(before).start();
    Operation op = order(1);
    first.submit(op);
    time.advance(Duration.ofSeconds(2));
    first.close();
    before.close();
    int refusedAttempts = host.totalAttempts();

    host.behave(FakeHost.always(201));
    IdempotentExecutor after = executor("pod-0");
    OutboxDispatcher second = outbox(after).start();
    time.advance(BACKOFF.minusSeconds(4));
    assertEquals(refusedAttempts, host.totalAttempts(), "a restart sent it before its journaled due time");
    assertFalse(record(op).state().isTerminal());

    time.advance(Duration.ofSeconds(6));
    assertEquals(1, host.effects());
    assertEquals(OperationState.SUCCEEDED, record(op).state());
    second.close();
    after.close();
  }
}
