package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A transport that says its attempt was not sent because the JVM is failing: a
 * {@link RequestNotSentException} whose cause is the JVM's own Error (a worker pool's
 * {@code OutOfMemoryError: unable to create native thread}, a body publisher that ran out of heap
 * while Idem read it). Both rules hold, on every path that sends: the attempt is recorded as not
 * sent (so no later claim owes it as ambiguous, and an operation that never left the process can
 * still end FAILED), the operation is PENDING, and the Error itself reaches whoever gets a fatal
 * Error from a transport (the caller, the pass): no retry, no backoff on its account.
 *
 * <p>Before the fix the Error was taken as any not-sent failure: retried with backoff (an inline
 * call ended FAILED after its four attempts), or left PENDING by a resume pass that went on, the
 * JVM's Error seen by nobody.
 */
class NotSentForFatalErrorTest {
  private final Harness h = new Harness(Harness.POLICY, b -> b.circuitBreaker(CircuitBreakerSettings.disabled()));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final OutOfMemoryError oom = new OutOfMemoryError("unable to create native thread");
  private final AtomicInteger calls = new AtomicInteger();
  private final Transport starved = (request, key) -> {
    calls.incrementAndGet();
    throw new RequestNotSentException("could not start the attempt", oom);
  };

  @Test
  void anInlineCallPassesTheErrorOnWithTheAttemptRecordedNotSent() throws Exception {
    assertSame(oom, assertThrows(OutOfMemoryError.class, () -> h.executor.execute(op, starved)));

    assertNotSentOnceAndPending();
  }

  /** A listener that throws when told of the attempt changes none of it. */
  @Test
  void aListenerThatThrowsOnTheAttemptChangesNothing() throws Exception {
    AssertionError listenerBug = new AssertionError("listener bug");
    Harness listened = new Harness(Harness.POLICY, b -> b.circuitBreaker(CircuitBreakerSettings.disabled())
        .listener(event -> {
          if (event instanceof IdemEvent.AttemptFinished) {
            throw listenerBug;
          }
        }));

    OutOfMemoryError thrown = assertThrows(OutOfMemoryError.class, () -> listened.executor.execute(op, starved));

    assertSame(oom, thrown);
    assertSame(listenerBug, thrown.getSuppressed()[0]);
    assertNotSentOnceAndPending(listened);
  }

  @Test
  void anAsyncCallFailsWithTheErrorWithTheAttemptRecordedNotSent() throws Exception {
    AsyncTransport async = (request, key) -> {
      calls.incrementAndGet();
      return CompletableFuture.failedFuture(new RequestNotSentException("could not start the attempt", oom));
    };
    CompletableFuture<Outcome> call = h.executor.executeAsync(op, async);
    h.time.advance(Duration.ofSeconds(30));

    ExecutionException e = assertThrows(ExecutionException.class, call::get);
    assertSame(oom, e.getCause());
    assertNotSentOnceAndPending();
  }

  @Test
  void aResumePassEndsWithTheErrorWithTheAttemptRecordedNotSent() throws Exception {
    h.executor.enqueue(op);

    assertSame(oom, assertThrows(OutOfMemoryError.class,
        () -> h.executor.resumePending(Map.of("create-order", ResumeHandler.of(starved, o -> { }, f -> { })))));

    assertNotSentOnceAndPending();
  }

  @Test
  void aResumePassOnLanesEndsWithTheErrorWithTheAttemptRecordedNotSent() throws Exception {
    Harness lanes = new Harness(Harness.POLICY,
        b -> b.circuitBreaker(CircuitBreakerSettings.disabled()).resumeConcurrency(2));
    lanes.executor.enqueue(op);

    assertSame(oom, assertThrows(OutOfMemoryError.class,
        () -> lanes.executor.resumePending(Map.of("create-order", ResumeHandler.of(starved, o -> { }, f -> { })))));

    assertNotSentOnceAndPending(lanes);
  }

  @Test
  void aResumeOfOneOperationPassesTheErrorOn() throws Exception {
    h.executor.enqueue(op);

    assertSame(oom, assertThrows(OutOfMemoryError.class, () -> h.executor.resume(op.id(), starved)));

    assertNotSentOnceAndPending();
  }

  /**
   * The call was cancelled before its transport said so: nobody waits for it, so the Error is a
   * background failure, which the next call reports, as for an Error thrown once a call was over.
   */
  @Test
  void aCancelledAsyncCallLeavesTheErrorForTheNextCall() throws Exception {
    CompletableFuture<ResponseSnapshot> attempt = new CompletableFuture<>();
    AsyncTransport async = (request, key) -> {
      calls.incrementAndGet();
      return attempt;
    };
    CompletableFuture<Outcome> call = h.executor.executeAsync(op, async);
    call.cancel(false);
    attempt.completeExceptionally(new RequestNotSentException("could not start the attempt", oom));

    IllegalStateException next = assertThrows(IllegalStateException.class,
        () -> h.executor.execute(Operation.builder("create-order", Requests.order("{\"n\":2}")).build(),
            (request, key) -> FakeHost.response(201, Map.of())));
    assertSame(oom, next.getCause());
    OperationRecord r = h.record(op);
    assertEquals(OperationState.PENDING, r.state(), r.reason());
    assertTrue(r.attempts().isEmpty(), "cancelled and never sent: nothing recorded " + r.attempts());
  }

  /** The record is what lets the operation end FAILED, not UNCERTAIN, when nothing is ever sent. */
  @Test
  void theOperationLaterEndsFailedNotUncertain() throws Exception {
    assertThrows(OutOfMemoryError.class, () -> h.executor.execute(op, starved));
    Transport refusing = (request, key) -> FakeHost.response(400, Map.of());

    assertThrows(OperationFailedException.class, () -> h.executor.resume(op.id(), refusing));

    assertEquals(OperationState.FAILED, h.record(op).state(), h.record(op).reason());
  }

  private void assertNotSentOnceAndPending() throws IdempotencyException {
    assertNotSentOnceAndPending(h);
  }

  private void assertNotSentOnceAndPending(Harness at) throws IdempotencyException {
    OperationRecord r = at.record(op);
    assertEquals(1, calls.get(), "one attempt, no retry on the JVM's Error");
    assertEquals(OperationState.PENDING, r.state(), r.reason());
    assertEquals(1, r.attempts().size(), r.attempts().toString());
    AttemptRecord a = r.attempts().get(0);
    assertEquals(Classification.SAFE, a.classification(), a.toString());
    assertFalse(a.mayHaveReachedServer(), a.toString());
    assertTrue(!r.nextAttemptAt().isAfter(at.time.now()), "due now: " + r.nextAttemptAt());
  }
}
