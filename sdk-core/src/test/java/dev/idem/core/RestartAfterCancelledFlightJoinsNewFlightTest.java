package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.internal.ExecutorAccess;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test (found by a review this session).
 *
 * <p>Review of c6bd74ee ("only a resume pass or delivery starts over after a leader cancelled in its
 * backoff"): the followers are told {@code SingleFlight.cancelledLeader} while the cancelled
 * execution still holds the operation's single flight ({@code leadAsync} completes the flight's
 * result, then leaves it), so a fenced delivery's restart that runs before that leave joins the
 * dead flight as a follower, is told {@code LeaderCancelled} again at once, and hands a new restart
 * to the pool. {@code leaveNotBegun}, the path every other start-over takes, leaves first and then
 * completes.
 *
 * <p>Staged here deterministically: an {@code executeAsync} got a 503; its backoff ended and its
 * retry waits in the executor's pool queue, so the journal holds the operation PENDING, due and held
 * by no one. An outbox delivery read it before that call began (the dispatcher's {@code runsHere}
 * check passed) and now follows it (ExecutorAccess.resumeAsync, fenced). The pool is then
 * saturated and runs work on the submitting thread, as a {@code ThreadPoolExecutor} with
 * {@code CallerRunsPolicy} does, and the app's timeout cancels its future. The restart runs inside
 * {@code cancel()}, before the leave: it joins the dead flight, whose callback restarts it again on
 * the same thread, and so on (some 400 nested restarts here) until the stack overflows; the
 * StackOverflowError ends in a stage nobody reads, and the delivery's future is left uncompleted
 * for good. Nothing is sent.
 *
 * <p>User-visible consequence: the outbox delivery never ends. It keeps its {@code maxInFlight}
 * slot, the operation is never sent again by this dispatcher (it is "in delivery"), its handle never
 * completes, and {@code shutdown(timeout)} never drains. The builder asks for a pool that refuses
 * rather than runs on the caller, but names only "a timer's work would then run on the scheduler's
 * thread" as the price; with a pool that refuses, the same ordering makes the restart end PENDING
 * (an operation due and held by no one left unsent, what c6bd74ee set out to fix) whenever the
 * restart's second hand-over meets a full queue.
 */
class RestartAfterCancelledFlightJoinsNewFlightTest {
  private final VirtualTime time = new VirtualTime();
  private final Queue<Runnable> poolQueue = new ConcurrentLinkedQueue<>();
  private volatile boolean callerRuns;
  /** A pool that queues, and once saturated runs work on the submitting thread (CallerRunsPolicy). */
  private final Executor pool = r -> {
    if (callerRuns) {
      r.run();
    } else {
      poolQueue.add(r);
    }
  };
  private final InMemoryJournal journal = new InMemoryJournal();
  private final ScriptedTransport transport = new ScriptedTransport(time).then(status(503)).otherwise(status(201));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(pool).random(() -> 0.5)
      .retryPolicy(RetryPolicy.builder().maxAttempts(4).baseDelay(Duration.ofSeconds(1))
          .maxDelay(Duration.ofSeconds(1)).jitter(Jitter.NONE).build())
      .build();

  @AfterEach
  void stop() {
    callerRuns = false;
    drainPool();
    idem.close();
  }

  private void drainPool() {
    for (Runnable r; (r = poolQueue.poll()) != null; ) {
      r.run();
    }
  }

  @Test
  void aDeliveryFollowingAnExecutionCancelledInItsBackoffEnds() throws Exception {
    OperationRecord asRead = idem.enqueue(op); // the dispatcher's due read, before the app's call
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    drainPool();
    assertEquals(1, transport.count(), "the 503");
    time.advance(Duration.ofSeconds(1)); // the backoff ends: the retry waits in the pool's queue
    assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state());

    CompletableFuture<Outcome> delivery = ExecutorAccess.get().resumeAsync(idem, asRead, transport);
    assertFalse(delivery.isDone(), "the delivery follows the app's execution (single flight)");

    callerRuns = true; // the pool is saturated
    assertTrue(first.cancel(true), "the app's timeout");
    callerRuns = false;
    drainPool();
    time.advance(Duration.ofSeconds(5));
    drainPool();

    assertTrue(delivery.isDone(), "the outbox delivery that waited for the cancelled execution never ended (its"
        + " restart joined the cancelled flight before the flight was left); sent " + transport.count()
        + " attempt(s), journal " + journal.find(op.id()).orElseThrow().state() + ", delivery " + delivery);
  }
}
