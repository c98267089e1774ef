package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.net.ConnectException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A queued operation's next attempt time is journaled on the wall clock. When that clock steps back
 * (an NTP correction of an hour), an operation queued before the step holds a due time an hour
 * ahead of the new clock, and the dispatcher, which reads due times off the wall clock, kept it
 * PENDING for the whole hour although the target was back. The backoff the dispatcher chose is
 * waited on the scheduler (monotonic), and a journaled due time further ahead than any backoff
 * allows counts as due after that longest backoff; backoff still holds for operations written after
 * the step. Virtual time throughout: the host's wall clock is the virtual time plus {@link #step}.
 */
class OutboxClockStepDueTest {
  /** The default retry policy's maxDelay: how long a round that was not sent waits before the next. */
  private static final Duration BACKOFF = Duration.ofSeconds(10);

  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, refused());
  private volatile Duration step = Duration.ZERO;

  private final Clock wall = new Clock() {
    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return time.now().plus(step);
    }
  };

  private static FakeHost.Behaviour refused() {
    return (key, n, now) -> Reply.fail(new ConnectException("Connection refused"));
  }

  private IdempotentExecutor executor(String owner) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).clock(wall).scheduler(time.scheduler())
        .sleeper(time.sleeper()).random(() -> 0.5).circuitBreaker(CircuitBreakerSettings.disabled())
        .asyncExecutor(Runnable::run).build();
  }

  /** Polls every second, backed off or not: what is left is the wait for the operation's due time. */
  private OutboxDispatcher outbox(IdempotentExecutor idem) {
    return OutboxDispatcher.builder(idem).clock(wall).scheduler(time.scheduler()).pollInterval(Duration.ofSeconds(1))
        .maxPollInterval(Duration.ofSeconds(1)).registerAsync("create-order", host).build();
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  private OperationRecord record(Operation op) throws Exception {
    return journal.find(op.id()).orElseThrow();
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
  void afterARestartOnAClockAnHourBehindAnOperationQueuedBeforeIsDeliveredByTheLongestBackoff() throws Exception {
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
        + " dispatcher waits no longer than its policy's longest backoff for it");
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
