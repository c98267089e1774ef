package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * Review of DueDeadlines (commit 1701eca5): the wall-clock-step guard must never send an operation
 * before the wait that was journaled for it. The virtual-time setup is OutboxClockStepDueTest's (WallClockStepFixture).
 */
class DueDeadlinesReviewTest extends WallClockStepFixture {
  DueDeadlinesReviewTest() {
    super(FakeHost.always(201));
  }

  /**
   * pod-0 runs an operation inline with its own policy (maxDelay 10 min, which honours Retry-After
   * up to that). The server answers 503 Retry-After: 300, so the operation is PENDING, due in 300 s,
   * while pod-0 waits. pod-1 (same config, default policy maxDelay 10 s) starts meanwhile (a rolling
   * restart): its first-poll scan takes a due time 300 s ahead as "written on a clock that was
   * ahead" and sends it after 10 s, 290 s before the server asked, with no clock step at all.
   */
  @Test
  void aRestartedDispatcherSendsAnInlineOperationBeforeTheRetryAfterItsOwnPolicyHonoured() throws Exception {
    host.behave((key, n, now) -> n == 1 ? Reply.status(503, Map.of("Retry-After", "300")) : Reply.status(201));
    IdempotentExecutor pod0 = executor("pod-0");
    RetryPolicy patient = RetryPolicy.builder().maxDelay(Duration.ofMinutes(10)).deadline(Duration.ofMinutes(30))
        .build();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).policy(patient).build();
    pod0.executeAsync(op, host);
    time.advance(Duration.ofMillis(100));
    OperationRecord waiting = record(op);
    assertEquals(OperationState.PENDING, waiting.state());
    Instant due = waiting.nextAttemptAt();
    assertTrue(Duration.between(wall.instant(), due).compareTo(Duration.ofSeconds(290)) > 0,
        "the server's Retry-After was honoured: due at " + due);
    assertEquals(1, host.totalAttempts());

    IdempotentExecutor pod1 = executor("pod-1");
    OutboxDispatcher outbox = outbox(pod1).start();  // pod-1 restarts; no clock step anywhere
    while (wall.instant().isBefore(due.minusSeconds(1))) {
      time.advance(Duration.ofSeconds(1));
      assertEquals(1, host.totalAttempts(), "sent at " + wall.instant() + ", though the journal holds it due at "
          + due + " (the server's Retry-After: 300); the wall clock never stepped");
    }
    outbox.close();
    pod1.close();
    pod0.close();
  }

  /**
   * pod-1 claims an operation (IN_FLIGHT, lease 2 min on the wall clock) and dies with its attempt
   * on the wire. NTP then steps the wall clock back an hour. pod-0's dispatcher, running all along,
   * should take the operation over once the lease has passed (2 min); the lease's expiry was
   * journaled on the clock before the step, and nothing keeps that wait on the scheduler, so the
   * operation stays IN_FLIGHT for the hour as well. (Without the step it is taken over in time.)
   */
  @Test
  @Disabled("known, left: a dead holder's lease journaled before a step back waits for the wall clock. A takeover"
      + " counted on the claimant's scheduler was tried and refuted (review rstep): a live holder judges its own lease on"
      + " its wall clock (RvrstepLiveHolderWaitingForWorkerTest), and only SQLite claims a record as read")
  void anOperationWhoseHolderDiedBeforeTheWallClockSteppedBackIsTakenOverAfterTheLeaseNotAnHourLater()
      throws Exception {
    IdempotentExecutor pod0 = executor("pod-0");
    OutboxDispatcher outbox = outbox(pod0).start();
    time.advance(Duration.ofSeconds(3));

    // pod-1's timers run on a scheduler that never runs again: the process is gone.
    VirtualTime dead = new VirtualTime();
    IdempotentExecutor pod1 = IdempotentExecutor.builder().journal(journal).owner("pod-1").clock(wall)
        .scheduler(dead.scheduler()).sleeper(dead.sleeper()).random(() -> 0.5)
        .circuitBreaker(CircuitBreakerSettings.disabled()).asyncExecutor(Runnable::run).build();
    host.behave((key, n, now) -> n == 1 ? Reply.hang() : Reply.status(201));
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    pod1.executeAsync(op, host);
    assertEquals(OperationState.IN_FLIGHT, record(op).state());
    assertEquals(1, host.totalAttempts());

    step = Duration.ofHours(-1);
    time.advance(Duration.ofMinutes(2).plusSeconds(15));  // the lease (2 min) has passed, and some polls

    assertEquals(2, host.totalAttempts(), "pod-1's lease of 2 min has passed, but its expiry was journaled on the"
        + " clock before the step: pod-0 waits the hour out (state " + record(op).state() + ")");
    assertEquals(OperationState.SUCCEEDED, record(op).state());
    outbox.close();
    pod0.close();
  }
}
