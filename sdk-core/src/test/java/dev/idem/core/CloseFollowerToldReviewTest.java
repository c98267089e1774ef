package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Review of e3b9eda: close() ends a synchronous follower's wait for a concurrent execution at once,
 * with an OperationPendingException that says the operation stays PENDING (or IN_FLIGHT) and that a
 * resume or an outbox on a new executor sends it again with the same key. But close lets the
 * leader's attempt on the wire run to its end and records it: when that attempt's answer is final
 * (a 400, say), the journal keeps FAILED, a terminal state nothing ever sends again. The follower's
 * caller was told the opposite of what the journal keeps, and waits for a delivery that will never
 * happen. Before e3b9eda the follower got the leader's outcome; close waits for the leader anyway. The
 * answer comes once close has begun, so that the follower is not told anything before it.
 */
class CloseFollowerToldReviewTest {
  private static final Duration LONG = Duration.ofSeconds(10);

  @Test
  void aFollowerEndedByCloseIsToldWhatTheJournalKeepsOnceTheLeadersAttemptIsRecorded() throws Exception {
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
      Thread[] followerThread = new Thread[1];
      Future<Object> follower = threads.submit(() -> {
        followerThread[0] = Thread.currentThread();
        return call(() -> h.executor.execute(op, t));
      });
      while (followerThread[0] == null || followerThread[0].getState() != Thread.State.WAITING) {
        Thread.onSpinWait();
      }
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
      OperationException followerTold = assertInstanceOf(OperationException.class,
          follower.get(LONG.toSeconds(), TimeUnit.SECONDS));
      OperationException leaderTold = assertInstanceOf(OperationException.class,
          leader.get(LONG.toSeconds(), TimeUnit.SECONDS));
      closed.get(LONG.toSeconds(), TimeUnit.SECONDS);

      OperationState kept = h.state(op);
      assertEquals(OperationState.FAILED, kept, "the leader's attempt was recorded as close documents");
      assertEquals(kept, leaderTold.state(), "the leader is told what the journal keeps");
      assertEquals(1, t.count(), "one attempt sent, by the leader");
      assertEquals(kept, followerTold.state(), "the follower ended by close was told " + followerTold.state()
          + " (" + followerTold.getMessage() + "), but the journal keeps " + kept
          + ": nothing will ever send the operation again");
    } finally {
      answer.complete(null);
      threads.shutdownNow();
    }
  }

  /**
   * The same with the follower asynchronous ({@code executeAsync} joined to the synchronous
   * leader): close ends the asynchronous executions it drives at once, PENDING, their late answers
   * written nowhere; but this one drives nothing, and the leader's attempt is recorded, so its
   * future completes with the leader's outcome too.
   */
  @Test
  void anAsyncFollowerOfASynchronousLeaderEndsWithTheLeadersOutcomeOnClose() throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    CompletableFuture<Void> onTheWire = new CompletableFuture<>();
    CompletableFuture<Void> answer = new CompletableFuture<>();
    ScriptedTransport t = h.transport(op).otherwise(status(400));
    Transport slow = (request, key) -> {
      onTheWire.complete(null);
      answer.join();
      return t.send(request, key);
    };
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      Future<Object> leader = threads.submit(() -> call(() -> h.executor.execute(op, slow)));
      onTheWire.get(LONG.toSeconds(), TimeUnit.SECONDS);
      CompletableFuture<Outcome> follower = h.executor.executeAsync(op, t);
      Thread[] closingThread = new Thread[1];
      Future<?> closed = threads.submit(() -> {
        closingThread[0] = Thread.currentThread();
        h.executor.close();
      });
      while (closingThread[0] == null || closingThread[0].getState() != Thread.State.TIMED_WAITING) {
        Thread.onSpinWait();
      }
      answer.complete(null);
      OperationException leaderTold = assertInstanceOf(OperationException.class,
          leader.get(LONG.toSeconds(), TimeUnit.SECONDS));
      closed.get(LONG.toSeconds(), TimeUnit.SECONDS);
      java.util.concurrent.ExecutionException thrown = org.junit.jupiter.api.Assertions.assertThrows(
          java.util.concurrent.ExecutionException.class, () -> follower.get(LONG.toSeconds(), TimeUnit.SECONDS));
      OperationException followerTold = assertInstanceOf(OperationException.class, thrown.getCause());

      OperationState kept = h.state(op);
      assertEquals(OperationState.FAILED, kept);
      assertEquals(kept, leaderTold.state());
      assertEquals(kept, followerTold.state(), "the async follower is told what the journal keeps: "
          + followerTold.getMessage());
      assertEquals(1, t.count(), "one attempt sent, by the leader");
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
