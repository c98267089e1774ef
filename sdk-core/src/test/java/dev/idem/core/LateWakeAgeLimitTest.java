package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ExpiredPendingAction;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.Scheduler;
import dev.idem.core.spi.Sleeper;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.net.ConnectException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Why: queued delivery (resume, an outbox's resumeAsync) only made a retry's scheduled delay end
 * before the operation's age limit; the claim after the backoff did not look at the limit again.
 * A sleeper or scheduler that wakes late (a suspended laptop, a GC pause, an overloaded
 * scheduler) then sent the retry past the limit, with a key the server may have forgotten (a
 * resend after the key's retention can take effect twice). Now the claim before each attempt
 * ends the operation instead, as the age limit ends it anywhere else: UNCERTAIN if an attempt may
 * have reached the server, else FAILED; under RESEND there is no limit and the retry goes out.
 * Both drivers: the sleeper is the sync driver's wait, the scheduler the async driver's.
 */
class LateWakeAgeLimitTest {
  private static final Duration AGE_LIMIT = Duration.ofHours(1);
  /** How much later than asked the backoff ends. */
  private static final Duration LATE = Duration.ofMinutes(10);

  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  /** Set once the first attempt went out: only the backoff after it wakes late. */
  private final AtomicBoolean wakeLate = new AtomicBoolean();
  private final Sleeper lateSleeper = d -> {
    time.sleeper().sleep(d);
    if (wakeLate.getAndSet(false)) {
      time.jump(LATE);
    }
  };
  private final Scheduler lateScheduler = (task, delay) -> time.scheduler().schedule(() -> {
    if (wakeLate.getAndSet(false)) {
      time.jump(LATE);
    }
    task.run();
  }, delay);

  private enum Driver { SYNC, ASYNC }

  private IdempotentExecutor executor(ExpiredPendingAction action) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(lateSleeper)
        .scheduler(lateScheduler).asyncExecutor(Runnable::run).random(() -> 0.5).owner(Harness.OWNER)
        .retryPolicy(Harness.POLICY).maxPendingAge(AGE_LIMIT).expiredPendingAction(action)
        .circuitBreaker(CircuitBreakerSettings.disabled()).build();
  }

  /** The first attempt gets {@code first}, any later one a 201. */
  private FakeHost host(Reply first) {
    return new FakeHost(time, (k, n, t) -> {
      if (n == 1) {
        wakeLate.set(true);
        return first;
      }
      return Reply.status(201);
    });
  }

  /**
   * Resumes {@code op} one second before its age limit: the first attempt is answered at once and
   * retried after 100 ms, before the limit, but the backoff ends {@link #LATE} past it.
   */
  private CompletableFuture<Outcome> resumeJustBeforeTheLimit(IdempotentExecutor idem, Operation op, FakeHost host,
      Driver driver) {
    time.advance(AGE_LIMIT.minusSeconds(1));
    if (driver == Driver.SYNC) {
      try {
        return CompletableFuture.completedFuture(idem.resume(op.id(), (Transport) host));
      } catch (IdempotencyException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    CompletableFuture<Outcome> f = idem.resumeAsync(op.id(), (AsyncTransport) host);
    time.advance(Duration.ofMillis(100));  // the backoff's timer: it fires LATE past the limit
    return f;
  }

  private static Throwable failure(CompletableFuture<Outcome> f) {
    assertTrue(f.isDone(), "not completed");
    return assertThrows(ExecutionException.class, f::get).getCause();
  }

  private static Operation order() {
    return Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  }

  @Test
  void syncRetryWakingPastTheLimitAfterAnAnsweredAttemptEndsUncertainUnsent() throws Exception {
    lateRetryEnds(Driver.SYNC, Reply.status(503), OperationState.UNCERTAIN);
  }

  @Test
  void asyncRetryWakingPastTheLimitAfterAnAnsweredAttemptEndsUncertainUnsent() throws Exception {
    lateRetryEnds(Driver.ASYNC, Reply.status(503), OperationState.UNCERTAIN);
  }

  @Test
  void syncRetryWakingPastTheLimitAfterAnUnsentAttemptEndsFailedUnsent() throws Exception {
    lateRetryEnds(Driver.SYNC, Reply.fail(new ConnectException("Connection refused")), OperationState.FAILED);
  }

  @Test
  void asyncRetryWakingPastTheLimitAfterAnUnsentAttemptEndsFailedUnsent() throws Exception {
    lateRetryEnds(Driver.ASYNC, Reply.fail(new ConnectException("Connection refused")), OperationState.FAILED);
  }

  private void lateRetryEnds(Driver driver, Reply first, OperationState expected) throws Exception {
    IdempotentExecutor idem = executor(ExpiredPendingAction.MARK_UNCERTAIN);
    Operation op = order();
    idem.enqueue(op);
    Instant limit = time.now().plus(AGE_LIMIT);
    FakeHost host = host(first);

    CompletableFuture<Outcome> f = resumeJustBeforeTheLimit(idem, op, host, driver);

    assertTrue(time.now().isAfter(limit), "the backoff ended past the limit: " + time.now());
    assertEquals(1, host.attempts(op.key()), "nothing sent past the age limit");
    assertTrue(host.sendTimes().stream().allMatch(t -> t.isBefore(limit)), host.sendTimes().toString());
    Throwable told = failure(f);
    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertEquals(expected, r.state(), r.reason());
    Class<? extends OperationException> kind = expected == OperationState.UNCERTAIN
        ? OperationUncertainException.class : OperationFailedException.class;
    assertInstanceOf(kind, told);
    assertTrue(r.reason().contains("age limit"), r.reason());
    assertEquals(1, r.attempts().size(), "only the attempt before the limit: " + r.attempts());
    assertEquals(0, journal.count(OperationState.IN_FLIGHT), "the claim was consumed by the end");
    assertEquals(0, journal.count(OperationState.PENDING));

    // Ended for good: a later resume sends nothing either.
    assertThrows(OperationException.class, () -> idem.resume(op.id(), (Transport) host));
    assertEquals(1, host.attempts(op.key()));
    idem.close();
  }

  @Test
  void syncRetryWakingLateUnderResendIsSent() throws Exception {
    lateRetryUnderResendIsSent(Driver.SYNC);
  }

  @Test
  void asyncRetryWakingLateUnderResendIsSent() throws Exception {
    lateRetryUnderResendIsSent(Driver.ASYNC);
  }

  private void lateRetryUnderResendIsSent(Driver driver) throws Exception {
    IdempotentExecutor idem = executor(ExpiredPendingAction.RESEND);
    Operation op = order();
    idem.enqueue(op);
    FakeHost host = host(Reply.status(503));

    Outcome outcome = resumeJustBeforeTheLimit(idem, op, host, driver).get();

    assertEquals(op.key(), outcome.key());
    assertEquals(2, host.attempts(op.key()), "no age limit under RESEND: the retry went out");
    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertEquals(OperationState.SUCCEEDED, r.state());
    assertEquals(List.of(503, 201), r.attempts().stream().map(AttemptRecord::status).toList());
    idem.close();
  }
}
