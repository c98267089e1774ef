package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A call joined to a concurrent synchronous execution of the same operation (single-flight) when
 * the executor is closed. Close lets the leader's attempt on the wire run to its end and records
 * it; when that answer is final (a 400 here), the journal keeps FAILED, a state nothing sends again.
 * The joined call must be told that too: a review of a change that ended its wait at once, with an
 * OperationPendingException saying the operation would be sent again, found it told the opposite
 * of what the journal keeps. The answer comes once close has begun, so that nothing is told before.
 */
class CloseFollowerOutcomeTest {
  private static final Duration LONG = Duration.ofSeconds(10);

  /** How the test joins its follower to the leader; returns what the follower was told. */
  private interface Join {
    Callable<Object> start(Harness h, Operation op, ScriptedTransport t, ExecutorService threads) throws Exception;
  }

  @Test
  void aSynchronousFollowerIsToldWhatTheJournalKeepsOnceTheLeadersAttemptIsRecorded() throws Exception {
    closeWhileTheLeaderIsOnTheWire((h, op, t, threads) -> {
      Thread[] followerThread = new Thread[1];
      Future<Object> follower = threads.submit(() -> {
        followerThread[0] = Thread.currentThread();
        return call(() -> h.executor.execute(op, t));
      });
      // Until the follower waits for the leader (never a sleep: its thread's state says).
      while (followerThread[0] == null || followerThread[0].getState() != Thread.State.WAITING) {
        Thread.onSpinWait();
      }
      return () -> follower.get(LONG.toSeconds(), TimeUnit.SECONDS);
    });
  }

  /**
   * The same with the follower asynchronous ({@code executeAsync}): close ends the asynchronous
   * executions it drives at once, PENDING, their late answers written nowhere; but this one drives
   * nothing, and the leader's attempt is recorded, so its future completes with the leader's
   * outcome too.
   */
  @Test
  void anAsyncFollowerOfASynchronousLeaderEndsWithTheLeadersOutcome() throws Exception {
    closeWhileTheLeaderIsOnTheWire((h, op, t, threads) -> {
      CompletableFuture<Outcome> follower = h.executor.executeAsync(op, t);
      return () -> assertThrows(ExecutionException.class, () -> follower.get(LONG.toSeconds(), TimeUnit.SECONDS))
          .getCause();
    });
  }

  private static void closeWhileTheLeaderIsOnTheWire(Join join) throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    CompletableFuture<Void> onTheWire = new CompletableFuture<>();
    CompletableFuture<Void> answer = new CompletableFuture<>();
    ScriptedTransport t = h.transport(op).otherwise(status(400));
    Transport slow = (request, key) -> {
      onTheWire.complete(null);
      answer.join();
      return t.send(request, key);
    };
    ExecutorService threads = Executors.newFixedThreadPool(3);
    try {
      Future<Object> leader = threads.submit(() -> call(() -> h.executor.execute(op, slow)));
      onTheWire.get(LONG.toSeconds(), TimeUnit.SECONDS);
      Callable<Object> followerTold = join.start(h, op, t, threads);
      Thread[] closingThread = new Thread[1];
      Future<?> closed = threads.submit(() -> {
        closingThread[0] = Thread.currentThread();
        h.executor.close();
      });
      // Until close waits for the calls in progress (its grace is a timed wait), then the answer.
      while (closingThread[0] == null || closingThread[0].getState() != Thread.State.TIMED_WAITING) {
        Thread.onSpinWait();
      }
      answer.complete(null);
      OperationException follower = assertInstanceOf(OperationException.class, followerTold.call());
      OperationException leaderTold = assertInstanceOf(OperationException.class,
          leader.get(LONG.toSeconds(), TimeUnit.SECONDS));
      closed.get(LONG.toSeconds(), TimeUnit.SECONDS);

      OperationState kept = h.state(op);
      assertEquals(OperationState.FAILED, kept, "the leader's attempt was recorded as close documents");
      assertEquals(kept, leaderTold.state(), "the leader is told what the journal keeps");
      assertEquals(1, t.count(), "one attempt sent, by the leader");
      assertEquals(kept, follower.state(), "the follower was told " + follower.state() + " ("
          + follower.getMessage() + "), but the journal keeps " + kept);
    } finally {
      answer.complete(null);
      threads.shutdownNow();
    }
  }

  private static Object call(Callable<Outcome> c) throws Exception {
    try {
      return c.call();
    } catch (IdempotencyException e) {
      return e;
    }
  }
}
