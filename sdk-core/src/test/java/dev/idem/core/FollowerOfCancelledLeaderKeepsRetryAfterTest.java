package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.OwnThreads;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test (a review of 22b87c72, whose first design this test refuted; the fix tells
 * waiting app calls PENDING again and lets only resume passes and deliveries start over).
 *
 * <p>Review of 22b87c72 ("calls waiting on an async execution cancelled in its backoff start over
 * from the journal"): a call that only waited on another caller's execution sends the operation
 * at once when that caller cancels, ahead of the server's {@code Retry-After}.
 *
 * <p>Two calls of one operation in this process (a double submit, two requests of the app that
 * carry the same order): the first leads, the second waits on it (single flight). The server
 * answers the first attempt {@code 429} with {@code Retry-After: 30}; the leader journals the
 * operation PENDING, next due in 30 s, and waits that out on the scheduler. Two seconds later the
 * first caller's own timeout cancels its future. The second caller cancelled nothing and was
 * waiting for an outcome that, had the first caller not gone away, would have come from an
 * attempt sent after the 30 s. Before 22b87c72 it was told PENDING (nothing sent); now it "starts
 * over from the journal" and its new start claims the operation and sends it at once, 28 s before
 * the server said it would take it, though the journal it starts over from says next due in 30 s.
 *
 * <p>User-visible consequence: the server that asked for 30 s of quiet (rate limiting, a key still
 * in flight, maintenance) gets the same key again 2 s later, because an unrelated caller timed out;
 * the README promises attempts "respect Retry-After". The same holds for a synchronous
 * {@code execute} waiting on the flight, which starts over on its own thread. The executor's pool
 * is a queue the test drains on its own thread, the clock, sleeper and scheduler are virtual: a
 * start-over that waited for the journaled due time would send at 30 s, which the test lets come.
 */
class FollowerOfCancelledLeaderKeepsRetryAfterTest {
  private static final long LONG = 10;
  private final VirtualTime time = new VirtualTime();
  private final Queue<Runnable> poolQueue = new ConcurrentLinkedQueue<>();
  private final Executor pool = poolQueue::add;
  private final InMemoryJournal journal = new InMemoryJournal();
  private final ScriptedTransport transport = new ScriptedTransport(time)
      .then(status(429, Map.of("Retry-After", "30"))).otherwise(status(201));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(pool).random(() -> 0.5)
      .retryPolicy(RetryPolicy.builder().maxAttempts(4).deadline(Duration.ofMinutes(5))
          .baseDelay(Duration.ofSeconds(1)).maxDelay(Duration.ofSeconds(60)).jitter(Jitter.NONE).build())
      .build();

  @AfterEach
  void stop() {
    idem.close();
  }

  private void drainPool() {
    for (Runnable r; (r = poolQueue.poll()) != null; ) {
      r.run();
    }
  }

  /** Runs the virtual scheduler and the pool until neither has anything to do up to {@code until}. */
  private void runUntil(Instant until) {
    drainPool();
    while (time.now().isBefore(until)) {
      time.advance(Duration.ofSeconds(1));
      drainPool();
    }
  }

  /** The attempts after the first, as "attempt N at T". */
  private List<String> resends() {
    return transport.sent().stream().filter(s -> s.number() > 1).map(s -> "attempt " + s.number() + " at " + s.at())
        .toList();
  }

  private OperationRecord leaderInItsRetryAfter(Instant start) throws IdempotencyException {
    assertEquals(1, transport.count());
    OperationRecord queued = journal.find(op.id()).orElseThrow();
    assertEquals(OperationState.PENDING, queued.state());
    assertEquals(start.plusSeconds(30), queued.nextAttemptAt(), "the leader honours the Retry-After: " + queued);
    return queued;
  }

  @Test
  void anAsyncCallWaitingOnItDoesNotSendAheadOfTheRetryAfterBecauseTheLeadersCallerCancelled() throws Exception {
    Instant start = time.now();
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    drainPool();
    OperationRecord queued = leaderInItsRetryAfter(start);

    CompletableFuture<Outcome> second = idem.executeAsync(op, transport); // waits on the first (single flight)
    assertFalse(second.isDone());

    time.advance(Duration.ofSeconds(2));
    assertTrue(first.cancel(true), "the first caller's 2 s timeout");
    runUntil(start.plusSeconds(31));

    List<String> early = transport.sent().stream().filter(s -> s.number() > 1 && s.at().isBefore(queued.nextAttemptAt()))
        .map(s -> "attempt " + s.number() + " at " + s.at()).toList();
    assertEquals(List.of(), early, "the second executeAsync, which cancelled nothing, sent the operation ahead of"
        + " the server's Retry-After (journal next due " + queued.nextAttemptAt() + "); all resends: " + resends());
  }

  @Test
  void aSyncExecuteWaitingOnItDoesNotSendAheadOfTheRetryAfterBecauseTheLeadersCallerCancelled() throws Exception {
    Instant start = time.now();
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    drainPool();
    OperationRecord queued = leaderInItsRetryAfter(start);

    AtomicReference<Thread> caller = new AtomicReference<>();
    CompletableFuture<Object> second = OwnThreads.supply(() -> {
      caller.set(Thread.currentThread());
      try {
        return idem.execute(op, transport);
      } catch (IdempotencyException e) {
        return e;
      }
    });
    while (!second.isDone() && (caller.get() == null || caller.get().getState() != Thread.State.WAITING)) {
      Thread.onSpinWait(); // until the execute waits on the flight
    }
    assertFalse(second.isDone(), "the execute waits on the first call (single flight)");

    time.advance(Duration.ofSeconds(2));
    assertTrue(first.cancel(true), "the first caller's 2 s timeout");
    drainPool(); // the flight's release: the waiting execute starts over on its own thread
    Object got = second.get(LONG, TimeUnit.SECONDS);

    List<String> early = transport.sent().stream().filter(s -> s.number() > 1 && s.at().isBefore(queued.nextAttemptAt()))
        .map(s -> "attempt " + s.number() + " at " + s.at()).toList();
    assertEquals(List.of(), early, "the waiting execute(), which cancelled nothing, sent the operation ahead of the"
        + " server's Retry-After (journal next due " + queued.nextAttemptAt() + "); all resends: " + resends()
        + "; it returned " + got);
  }
}
