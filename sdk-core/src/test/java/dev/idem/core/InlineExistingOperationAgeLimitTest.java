package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.spi.Scheduler;
import dev.idem.core.spi.Sleeper;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Why: execute and executeAsync of an operation the journal held already (a resubmit, a restarted
 * batch job) checked its age limit once, before leading, and then ran an attempt loop without one:
 * a retry that fell past the limit, or a backoff that woke past it, was sent with a key the server
 * may have forgotten (KeyRetention: such a call is a resend as much as a resume is). Now the loop
 * has the limit: a retry that would fall at or past it is not sent and the call gives up, and the
 * claim before each attempt ends the operation past it; either way the caller is told what the
 * journal holds, UNCERTAIN if an attempt may have reached the server, else FAILED. An operation the
 * call itself created keeps no age limit inside that call: its deadline bounds it.
 */
class InlineExistingOperationAgeLimitTest {
  private static final Duration AGE_LIMIT = Duration.ofHours(1);
  /** How much later than asked a backoff ends, once {@link #wakeLate} is set. */
  private static final Duration LATE = Duration.ofMinutes(10);

  private enum Driver { SYNC, ASYNC }

  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
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
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .sleeper(lateSleeper).scheduler(lateScheduler).asyncExecutor(Runnable::run).random(() -> 0.5)
      .owner(Harness.OWNER).retryPolicy(Harness.POLICY).serverKeyRetention(AGE_LIMIT).maxPendingAge(AGE_LIMIT)
      .circuitBreaker(CircuitBreakerSettings.disabled()).build();
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();

  /**
   * Journals {@link #op} and resumes it once, its first attempt failing with {@code first} and the
   * rest refused, so that it is PENDING; then moves to one second before its age limit.
   *
   * @return the age limit
   */
  private Instant pendingAfter(IOException first) throws Exception {
    Instant limit = time.now().plus(AGE_LIMIT);
    idem.enqueue(op);
    FakeHost earlier = new FakeHost(time, (k, n, t) -> n == 1 ? Reply.fail(first)
        : Reply.fail(new ConnectException("Connection refused")));
    assertThrows(OperationPendingException.class, () -> idem.resume(op.id(), earlier));
    time.advance(Duration.between(time.now(), limit).minusSeconds(1));
    return limit;
  }

  /** Executes {@link #op} again through {@code host}, and returns what the caller was told. */
  private Throwable executeAgain(Driver driver, FakeHost host) {
    if (driver == Driver.SYNC) {
      return assertThrows(OperationException.class, () -> idem.execute(op, host));
    }
    CompletableFuture<Outcome> f = idem.executeAsync(op, host);
    time.runUntilIdle();
    assertTrue(f.isDone(), "not completed");
    return assertThrows(ExecutionException.class, f::get).getCause();
  }

  /** Attempt 1 of this call is answered {@code reply} two seconds later, past the limit; any later one 201. */
  private FakeHost slowFirst(Driver driver, Reply reply) {
    FakeHost host = new FakeHost(time, (k, n, t) -> {
      if (n == 1 && driver == Driver.SYNC) {
        time.advance(Duration.ofSeconds(2));
      }
      return n == 1 ? reply : Reply.status(201);
    });
    return driver == Driver.ASYNC ? host.latency(Duration.ofSeconds(2)) : host;
  }

  private void assertEndedAtLimit(Throwable told, OperationState expected, FakeHost host, Instant limit)
      throws Exception {
    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertEquals(1, host.attempts(op.key()), "only the attempt before the limit: sends at " + host.sendTimes());
    assertTrue(host.sendTimes().stream().allMatch(t -> t.isBefore(limit)), host.sendTimes().toString());
    assertEquals(expected, r.state(), r.reason());
    Class<? extends OperationException> kind = expected == OperationState.UNCERTAIN
        ? OperationUncertainException.class : OperationFailedException.class;
    assertInstanceOf(kind, told, told.toString());
    assertEquals(expected, ((OperationException) told).state(), "the caller is told what the journal holds");
    assertTrue(r.reason().contains("age limit"), r.reason());
    assertEquals(0, journal.count(OperationState.IN_FLIGHT), "no claim left behind");

    // Ended for good: executing it again sends nothing either.
    assertThrows(OperationException.class, () -> idem.execute(op, host));
    assertEquals(1, host.attempts(op.key()));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aRetryThatWouldFallPastTheLimitAfterAnAmbiguousAttemptEndsUncertain(Driver driver) throws Exception {
    Instant limit = pendingAfter(new SocketTimeoutException("Read timed out"));
    FakeHost host = slowFirst(driver, Reply.status(503));

    Throwable told = executeAgain(driver, host);

    assertEndedAtLimit(told, OperationState.UNCERTAIN, host, limit);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aRetryThatWouldFallPastTheLimitWhenNothingCanHaveReachedTheServerEndsFailed(Driver driver)
      throws Exception {
    Instant limit = pendingAfter(new ConnectException("Connection refused"));
    FakeHost host = slowFirst(driver, Reply.fail(new ConnectException("Connection refused")));

    Throwable told = executeAgain(driver, host);

    assertEndedAtLimit(told, OperationState.FAILED, host, limit);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void anAnsweredAttemptReachedTheServer_soTheAgeLimitEndsItUncertain(Driver driver) throws Exception {
    // As the age limit ends an operation anywhere else: the server's retention of the key may have
    // started at the 503, so a resend past the limit is unprotected.
    Instant limit = pendingAfter(new ConnectException("Connection refused"));
    FakeHost host = slowFirst(driver, Reply.status(503));

    Throwable told = executeAgain(driver, host);

    assertEndedAtLimit(told, OperationState.UNCERTAIN, host, limit);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aBackoffThatWakesPastTheLimitEndsItAtTheClaim(Driver driver) throws Exception {
    Instant limit = pendingAfter(new SocketTimeoutException("Read timed out"));
    FakeHost host = new FakeHost(time, (k, n, t) -> {
      if (n == 1) {
        wakeLate.set(true);  // answered at once; its 100 ms backoff, well before the limit, wakes LATE past it
        return Reply.status(503);
      }
      return Reply.status(201);
    });

    Throwable told = executeAgain(driver, host);

    assertTrue(time.now().isAfter(limit), "the backoff ended past the limit: " + time.now());
    assertEndedAtLimit(told, OperationState.UNCERTAIN, host, limit);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void anOperationTheCallCreatedIsBoundedByItsDeadlineNotTheAgeLimit(Driver driver) throws Exception {
    IdempotentExecutor shortLimit = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .owner(Harness.OWNER).retryPolicy(Harness.POLICY).maxPendingAge(Duration.ofSeconds(1))
        .circuitBreaker(CircuitBreakerSettings.disabled()).build();
    FakeHost host = slowFirst(driver, Reply.status(503));  // answered past the 1 s age limit, within the deadline

    Outcome out;
    if (driver == Driver.SYNC) {
      out = shortLimit.execute(op, host);
    } else {
      CompletableFuture<Outcome> f = shortLimit.executeAsync(op, host);
      time.runUntilIdle();
      out = f.get();
    }

    assertEquals(op.key(), out.key());
    assertEquals(2, host.attempts(op.key()), "retried past the age limit: this call created it");
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    shortLimit.close();
  }
}
