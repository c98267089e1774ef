package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.resume.ExpiredPendingAction;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * Queued delivery keeps an operation whose target is unreachable PENDING until its age limit
 * ({@code maxPendingAge}, below the server's key retention), then ends it without sending it
 * again: FAILED if no attempt can have reached the server, UNCERTAIN if one may have.
 */
class AgeLimitTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  /** Refuses every connection until told otherwise. */
  private final FakeHost host = new FakeHost(time, (k, n, t) -> Reply.fail(new ConnectException("Connection refused")));

  private IdempotentExecutor.Builder executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).scheduler(time.scheduler())
        .sleeper(time.sleeper()).asyncExecutor(Runnable::run).random(() -> 0.5);
  }

  private OutboxDispatcher outbox(IdempotentExecutor idem) {
    return OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build().start();
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  private OperationRecord record(Operation op) throws Exception {
    return journal.find(op.id()).orElseThrow();
  }

  private static Throwable failure(CompletableFuture<?> f) {
    assertTrue(f.isDone(), "not completed yet");
    return assertThrows(ExecutionException.class, f::get).getCause();
  }

  /** Advances to just before {@code limit}, checks the operation is still PENDING, then past it. */
  private void crossAgeLimit(Operation op, Instant limit) throws Exception {
    time.advance(Duration.between(time.now(), limit).minusSeconds(61));
    assertEquals(OperationState.PENDING, record(op).state(), "kept while younger than its age limit");
    time.advance(Duration.ofMinutes(3));
  }

  @Test
  void anOperationNeverSentEndsFailedAtTheDefaultAgeLimitOfEighteenHoursAndNothingIsSentAfter() throws Exception {
    OutboxDispatcher outbox = outbox(executor().build());
    Operation op = order(1);
    CompletableFuture<Outcome> handle = outbox.submit(op);
    Instant limit = time.now().plus(Duration.ofHours(18));

    crossAgeLimit(op, limit);

    OperationRecord r = record(op);
    assertEquals(OperationState.FAILED, r.state());
    assertTrue(r.reason().contains("age limit") && r.reason().contains("key retention"), r.reason());
    assertTrue(r.reason().contains("no attempt can have reached the server"), r.reason());
    assertTrue(r.attempts().stream().allMatch(a -> a.startedAt().isBefore(limit)), "nothing sent at or past it");
    assertInstanceOf(OperationFailedException.class, failure(handle));
    int attempts = host.totalAttempts();
    host.behave(FakeHost.always(201));
    time.advance(Duration.ofHours(1));
    assertEquals(attempts, host.totalAttempts(), "a FAILED operation is not sent again");
    outbox.close();
  }

  @Test
  void anOperationThatMayHaveReachedTheServerEndsUncertainAtItsAgeLimit() throws Exception {
    // The first attempt went out and its answer was lost; from then on the target is unreachable.
    host.behave((k, n, t) -> n == 1 ? Reply.fail(new SocketTimeoutException("Read timed out"))
        : Reply.fail(new ConnectException("Connection refused")));
    OutboxDispatcher outbox = outbox(executor().build());
    Operation op = order(1);
    CompletableFuture<Outcome> handle = outbox.submit(op);
    Instant limit = time.now().plus(Duration.ofHours(18));

    crossAgeLimit(op, limit);

    OperationRecord r = record(op);
    assertEquals(OperationState.UNCERTAIN, r.state(), r.reason());
    assertTrue(r.reason().contains("may have reached the server"), r.reason());
    assertInstanceOf(OperationUncertainException.class, failure(handle));
    outbox.close();
  }

  @Test
  void theDefaultAgeLimitFollowsTheServersKeyRetention() throws Exception {
    OutboxDispatcher outbox = outbox(executor().serverKeyRetention(Duration.ofHours(4)).build());
    Operation op = order(1);
    outbox.submit(op);

    crossAgeLimit(op, time.now().plus(Duration.ofHours(3)));

    assertEquals(OperationState.FAILED, record(op).state());
    outbox.close();
  }

  @Test
  void anExplicitAgeLimitAppliesToResumePendingToo() throws Exception {
    IdempotentExecutor idem = executor().maxPendingAge(Duration.ofHours(2)).build();
    Operation op = order(1);
    idem.enqueue(op);
    java.util.List<OperationException> told = new java.util.ArrayList<>();
    ResumeHandler handler = ResumeHandler.of(host, o -> { throw new AssertionError(o); }, told::add);

    for (int minute = 0; minute < 119; minute++) {
      ResumeSummary pass = idem.resumePending(java.util.Map.of("create-order", handler));
      assertEquals(0, pass.failed(), "minute " + minute);
      time.advance(Duration.ofMinutes(1));
    }
    assertEquals(OperationState.PENDING, record(op).state());
    time.advance(Duration.ofMinutes(1));
    ResumeSummary last = idem.resumePending(java.util.Map.of("create-order", handler));

    assertEquals(1, last.failed());
    assertEquals(1, last.expired());
    assertEquals(OperationState.FAILED, record(op).state());
    assertInstanceOf(OperationFailedException.class, told.get(told.size() - 1));
    assertTrue(record(op).attempts().size() < 5 + 119, record(op).attempts().size() + " attempts");
  }

  @Test
  void aRetryThatWouldFallAtOrPastTheAgeLimitIsNotSentAndTheOperationEndsThere() throws Exception {
    host.behave(FakeHost.always(503));
    IdempotentExecutor idem = executor().maxPendingAge(Duration.ofHours(2))
        .circuitBreaker(CircuitBreakerSettings.disabled()).build();
    Operation op = order(1);
    idem.enqueue(op);
    Instant limit = time.now().plus(Duration.ofHours(2));
    time.advance(Duration.ofHours(2).minusMillis(150));

    // 503, then a retry after 100 ms (before the limit), another 503, then the next retry would
    // wait 200 ms and start past the limit: it is not made.
    OperationPendingException e = assertThrows(OperationPendingException.class, () -> idem.resume(op.id(), host));
    assertTrue(e.getMessage().contains("age limit"), e.getMessage());
    assertEquals(2, host.attempts(op.key()));
    assertEquals(limit, record(op).nextAttemptAt(), "due at its age limit");

    time.advance(Duration.ofMillis(150));
    assertThrows(OperationUncertainException.class, () -> idem.resume(op.id(), host));
    assertEquals(2, host.attempts(op.key()), "not sent at its age limit");
    assertEquals(OperationState.UNCERTAIN, record(op).state(), "the 503s reached the server");
  }

  @Test
  void underResendThereIsNoAgeLimit() throws Exception {
    OutboxDispatcher outbox = outbox(executor().expiredPendingAction(ExpiredPendingAction.RESEND).build());
    Operation op = order(1);
    CompletableFuture<Outcome> handle = outbox.submit(op);

    time.advance(Duration.ofHours(30));
    assertEquals(OperationState.PENDING, record(op).state());
    assertFalse(handle.isDone());

    host.behave(FakeHost.always(201));
    time.advance(Duration.ofMinutes(2));
    assertEquals(op.key(), handle.get().key());
    assertEquals(1, host.effects());
    outbox.close();
  }

  @Test
  void theAgeLimitMustBePositiveAndNotAboveTheServersKeyRetention() {
    IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
        () -> IdempotentExecutor.builder().maxPendingAge(Duration.ZERO));
    assertTrue(zero.getMessage().contains("maxPendingAge"), zero.getMessage());
    assertThrows(IllegalArgumentException.class, () -> IdempotentExecutor.builder().maxPendingAge(Duration.ofHours(-1)));

    IllegalArgumentException above = assertThrows(IllegalArgumentException.class,
        () -> IdempotentExecutor.builder().maxPendingAge(Duration.ofHours(25)).build());
    assertTrue(above.getMessage().contains("maxPendingAge") && above.getMessage().contains("serverKeyRetention"),
        above.getMessage());
    // Checked at build, so the order of the two setters does not matter.
    assertThrows(IllegalArgumentException.class, () -> IdempotentExecutor.builder().maxPendingAge(Duration.ofHours(2))
        .serverKeyRetention(Duration.ofHours(1)).build());
    assertDoesNotThrow(() -> IdempotentExecutor.builder().serverKeyRetention(Duration.ofHours(48))
        .maxPendingAge(Duration.ofHours(48)).build());
  }
}
