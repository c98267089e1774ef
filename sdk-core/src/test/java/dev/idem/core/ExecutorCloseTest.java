package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.hold;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.Reconciliation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Issue 24: an executor has a lifecycle. It owns its threads (or uses the app's), and close()
 * says what becomes of the executions in progress and of later calls, instead of leaving
 * JVM-global threads that nothing can stop.
 */
class ExecutorCloseTest {
  private static final Duration LONG = Duration.ofSeconds(10);

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  @Test
  void closeEndsAsyncExecutionsInProgressAsPendingAndTheirOperationsKeepTheirKeys() throws Exception {
    Harness h = new Harness();
    Operation waiting = order(1);
    Operation onTheWire = order(2);
    CompletableFuture<ResponseSnapshot> held = new CompletableFuture<>();
    ScriptedTransport waitingTransport = h.transport(waiting).then(status(503));
    ScriptedTransport wireTransport = h.transport(onTheWire).then(hold(held));
    CompletableFuture<Outcome> f1 = h.executor.executeAsync(waiting, waitingTransport);  // in its 100 ms backoff
    CompletableFuture<Outcome> f2 = h.executor.executeAsync(onTheWire, wireTransport);

    h.executor.close();

    for (var e : Map.of(waiting, f1, onTheWire, f2).entrySet()) {
      assertTrue(e.getValue().isDone(), "completed by close, not left hanging");
      ExecutionException thrown = assertThrows(ExecutionException.class, () -> e.getValue().get());
      OperationPendingException pending = assertInstanceOf(OperationPendingException.class, thrown.getCause());
      assertEquals(e.getKey().id(), pending.operationId());
      assertTrue(pending.getMessage().contains("closed"), pending.getMessage());
      assertTrue(pending.getMessage().contains(e.getKey().id().key().toString()), "names the key it keeps");
    }
    assertEquals(OperationState.PENDING, h.state(waiting));
    assertEquals(OperationState.IN_FLIGHT, h.state(onTheWire), "held under the lease until it expires");

    // Nothing more happens: the backoff timer was cancelled, and a late answer writes nothing.
    h.time.runUntilIdle();
    held.complete(ScriptedTransport.response(201));
    assertEquals(1, waitingTransport.count());
    assertEquals(1, wireTransport.count());
    assertEquals(1, h.record(waiting).attempts().size());
    assertEquals(OperationState.IN_FLIGHT, h.state(onTheWire));

    // A new executor on the same journal sends both again, with their keys, once the lease is over.
    h.time.advance(Duration.ofMinutes(3));
    try (IdempotentExecutor next = IdempotentExecutor.builder().journal(h.journal).clock(h.time.clock())
        .sleeper(h.time.sleeper()).scheduler(h.time.scheduler()).asyncExecutor(Runnable::run).owner("next").build()) {
      ScriptedTransport resumed = new ScriptedTransport(h.time).otherwise(status(201));
      ResumeSummary summary = next.resumePending(Map.of("create-order",
          ResumeHandler.of(resumed, o -> { }, f -> { throw new AssertionError(f); })));
      assertEquals(2, summary.succeeded());
      assertEquals(Set.of(waiting.id().key(), onTheWire.id().key()),
          resumed.sent().stream().map(ScriptedTransport.Sent::key).collect(Collectors.toSet()));
      assertEquals(OperationState.SUCCEEDED, h.state(waiting));
      assertEquals(OperationState.SUCCEEDED, h.state(onTheWire));
    }
  }

  @Test
  void everyCallAfterCloseIsRefusedNamingCloseAndNothingIsJournaled() throws Exception {
    Harness h = new Harness();
    Operation done = order(1);
    h.executor.execute(done, h.transport(done).then(status(201)));
    h.executor.close();
    h.executor.close();  // idempotent
    assertTrue(h.executor.isClosed());

    Operation op = order(2);
    ScriptedTransport t = h.transport(op).otherwise(status(201));
    Map<String, Executable> calls = Map.of(
        "execute", () -> h.executor.execute(op, t),
        "executeAsync", () -> h.executor.executeAsync(op, t),
        "enqueue", () -> h.executor.enqueue(op),
        "resume", () -> h.executor.resume(done.id(), t),
        "resumeAsync", () -> h.executor.resumeAsync(done.id(), t),
        "resumePending", () -> h.executor.resumePending(Map.of()),
        "redrive", () -> h.executor.redrive(done.id()),
        "reconcileUncertain", () -> h.executor.reconcileUncertain(record -> Reconciliation.unknown("n/a")));
    calls.forEach((name, call) -> {
      IllegalStateException e = assertThrows(IllegalStateException.class, call, name);
      assertTrue(e.getMessage().contains("close()") && e.getMessage().contains(name), e.getMessage());
    });
    assertEquals(0, t.count());
    assertFalse(h.journal.find(op.id()).isPresent());
    // Reading the app's journal still works.
    assertEquals(OperationState.SUCCEEDED, h.executor.find(done.id()).orElseThrow().state());
  }

  /**
   * Closed while its attempt is on the wire, a synchronous call records that attempt, sends no
   * other, and does not wait out a backoff it will not use.
   */
  @Test
  void aSynchronousCallInProgressStopsBeforeItsNextAttemptAndItsBackoffWhenClosed() throws Exception {
    List<Duration> slept = new java.util.concurrent.CopyOnWriteArrayList<>();
    Harness h = new Harness(Harness.POLICY, b -> b.sleeper(slept::add));
    Operation op = order(1);
    ScriptedTransport t = h.transport(op).then(status(503)).otherwise(status(201));
    Transport closingMidAttempt = (request, key) -> {
      h.executor.close();  // as another thread would, while this attempt is on the wire
      return t.send(request, key);
    };
    OperationPendingException e = assertThrows(OperationPendingException.class,
        () -> h.executor.execute(op, closingMidAttempt));
    assertTrue(String.valueOf(e.getCause()).contains("closed"), String.valueOf(e.getCause()));
    assertEquals(1, t.count(), "the attempt on the wire was recorded, no other was sent");
    assertEquals(List.of(), slept, "waited out a backoff before an attempt that close forbids");
    OperationRecord r = h.record(op);
    assertEquals(OperationState.PENDING, r.state());
    assertEquals(1, r.attempts().size());
  }

  /**
   * The app closes its journal right after close() returns (the starter: the executor bean, then
   * the journal bean). A synchronous attempt on the wire on another thread must therefore be over
   * and recorded when close returns, or its answer lands on a closed journal: the journal keeps
   * IN_FLIGHT with no attempt, and the caller, whose request took effect, gets a journal failure.
   */
  @Test
  void closeWaitsForASynchronousAttemptOnTheWireOnAnotherThreadAndItIsRecorded() throws Exception {
    Harness h = new Harness();
    Operation op = order(1);
    CompletableFuture<Void> onTheWire = new CompletableFuture<>();
    CompletableFuture<Void> answer = new CompletableFuture<>();
    ScriptedTransport t = h.transport(op).otherwise(status(201));
    Transport slow = (request, key) -> {
      onTheWire.complete(null);
      answer.join();
      return t.send(request, key);
    };
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      CompletableFuture<Outcome> caller = CompletableFuture.supplyAsync(() -> {
        try {
          return h.executor.execute(op, slow);
        } catch (IdempotencyException e) {
          throw new java.util.concurrent.CompletionException(e);
        }
      }, threads);
      onTheWire.get(LONG.toSeconds(), TimeUnit.SECONDS);
      Thread[] closer = new Thread[1];
      CompletableFuture<Void> closed = CompletableFuture.runAsync(() -> {
        closer[0] = Thread.currentThread();
        h.executor.close();
      }, threads);
      // Until close has either returned or is waiting (never a sleep: its thread's state says).
      while (!closed.isDone() && (closer[0] == null || closer[0].getState() != Thread.State.TIMED_WAITING
          || !h.executor.isClosed())) {
        Thread.onSpinWait();
      }
      assertFalse(closed.isDone(), "close returned while a synchronous attempt was still on the wire");
      // A second close (a framework's, after the app's) waits for the first as well.
      Thread[] second = new Thread[1];
      CompletableFuture<Void> closedAgain = CompletableFuture.runAsync(() -> {
        second[0] = Thread.currentThread();
        h.executor.close();
      });
      while (!closedAgain.isDone() && (second[0] == null || second[0].getState() != Thread.State.TIMED_WAITING)) {
        Thread.onSpinWait();
      }
      assertFalse(closedAgain.isDone(), "a second close returned while the first still waited");

      answer.complete(null);
      closed.get(LONG.toSeconds(), TimeUnit.SECONDS);
      closedAgain.get(LONG.toSeconds(), TimeUnit.SECONDS);
      OperationRecord r = h.record(op); // as the app would, right before closing its journal
      assertEquals(OperationState.SUCCEEDED, r.state());
      assertEquals(1, r.attempts().size());
      assertEquals(201, caller.get(LONG.toSeconds(), TimeUnit.SECONDS).response().status());
      assertEquals(1, t.count());
    } finally {
      answer.complete(null);
      threads.shutdownNow();
    }
  }

  /**
   * Close waits for the synchronous calls in progress; one waiting out a long backoff (a target
   * down for an hour answers 503 with Retry-After) would hold close for its whole grace and then
   * wake on a closed journal. Close now wakes it: the call ends PENDING at once, and the interrupt
   * that woke it is not left on the app's thread.
   */
  @Test
  void closeWakesASynchronousCallWaitingOutItsBackoffAndItEndsPending() throws Exception {
    java.util.concurrent.CountDownLatch backingOff = new java.util.concurrent.CountDownLatch(1);
    // A backoff that only an interrupt ends, as a real one of an hour would for this test.
    Harness h = new Harness(Harness.POLICY, b -> b.sleeper(d -> {
      backingOff.countDown();
      new java.util.concurrent.CountDownLatch(1).await();
    }));
    Operation op = order(1);
    ScriptedTransport t = h.transport(op).then(status(503)).otherwise(status(201));
    ExecutorService threads = Executors.newSingleThreadExecutor();
    try {
      Future<Object[]> caller = threads.submit(() -> {
        try {
          h.executor.execute(op, t);
          return new Object[] {null, Thread.currentThread().isInterrupted()};
        } catch (IdempotencyException e) {
          return new Object[] {e, Thread.currentThread().isInterrupted()};
        }
      });
      assertTrue(backingOff.await(LONG.toSeconds(), TimeUnit.SECONDS));

      h.executor.close();

      Object[] ended = caller.get(LONG.toSeconds(), TimeUnit.SECONDS);
      OperationPendingException e = assertInstanceOf(OperationPendingException.class, ended[0]);
      assertTrue(String.valueOf(e.getCause()).contains("closed"), String.valueOf(e.getCause()));
      assertEquals(false, ended[1], "close's interrupt was left on the app's thread");
      assertEquals(1, t.count(), "no attempt after close");
      OperationRecord r = h.record(op);
      assertEquals(OperationState.PENDING, r.state());
      assertEquals(1, r.attempts().size());
    } finally {
      threads.shutdownNow();
    }
  }

  /**
   * A synchronous call that joined a concurrent execution of the same operation (single-flight)
   * while that execution waits out a backoff: close wakes the leader, which ends PENDING with its
   * key, and the follower ends with it, the same way. (With the leader's attempt on the wire, the
   * follower waits for its outcome, as close does: {@code CloseFollowerToldReviewTest}.)
   */
  @Test
  void closeEndsACallWaitingForALeaderInItsBackoffTheWayItEndsTheLeader() throws Exception {
    java.util.concurrent.CountDownLatch backingOff = new java.util.concurrent.CountDownLatch(1);
    Harness h = new Harness(Harness.POLICY, b -> b.sleeper(d -> {
      backingOff.countDown();
      new java.util.concurrent.CountDownLatch(1).await(); // only an interrupt ends it
    }));
    Operation op = order(1);
    ScriptedTransport t = h.transport(op).then(status(503)).otherwise(status(201));
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      Future<Object> leader = threads.submit(() -> call(() -> h.executor.execute(op, t)));
      assertTrue(backingOff.await(LONG.toSeconds(), TimeUnit.SECONDS));
      Thread[] followerThread = new Thread[1];
      Future<Object> follower = threads.submit(() -> {
        followerThread[0] = Thread.currentThread();
        return call(() -> h.executor.execute(op, t));
      });
      while (followerThread[0] == null || followerThread[0].getState() != Thread.State.WAITING) {
        Thread.onSpinWait();
      }

      h.executor.close();

      for (Future<Object> ended : List.of(leader, follower)) {
        OperationPendingException e = assertInstanceOf(OperationPendingException.class,
            ended.get(LONG.toSeconds(), TimeUnit.SECONDS));
        assertEquals(op.id(), e.operationId());
        assertTrue(String.valueOf(e.getCause()).contains("closed"), String.valueOf(e.getCause()));
      }
      assertEquals(1, t.count());
      assertEquals(OperationState.PENDING, h.state(op));
    } finally {
      threads.shutdownNow();
    }
  }

  /** What a call returned, or the IdempotencyException it threw. */
  private static Object call(java.util.concurrent.Callable<Outcome> c) throws Exception {
    try {
      return c.call();
    } catch (IdempotencyException e) {
      return e;
    }
  }

  /**
   * reconcileUncertain is counted as a synchronous call (close waits for it), so once closed it
   * stops before writing anything more: a reconciler that closes the executor (as another thread
   * would, while the server is asked) neither holds close for its grace (the call is its own thread's)
   * nor gets the rest of the pass written to a journal the app is about to close.
   */
  @Test
  void aReconciliationClosedWhileTheServerIsAskedWritesNothingMoreAndSaysSo() throws Exception {
    Harness h = new Harness();
    Operation first = order(1);
    Operation second = order(2);
    for (Operation op : List.of(first, second)) {
      h.executor.enqueue(op);
      java.time.Instant now = h.time.clock().instant();
      dev.idem.core.spi.Lease lease = h.journal.claim(op.id(), "elsewhere", now, Duration.ofMinutes(1)).orElseThrow();
      h.journal.transition(op.id(), lease, dev.idem.core.spi.Transition.finish(OperationState.UNCERTAIN, now, null,
          "set up: the server may have taken it"));
    }
    List<OperationId> asked = new java.util.concurrent.CopyOnWriteArrayList<>();

    IllegalStateException e = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(5),
        () -> assertThrows(IllegalStateException.class, () -> h.executor.reconcileUncertain(record -> {
          asked.add(record.id());
          h.executor.close();
          return Reconciliation.succeeded(ScriptedTransport.response(201), "found at the server");
        })), "close from inside the call waited for the call itself");

    assertTrue(e.getMessage().contains("close()") && e.getMessage().contains("reconcileUncertain"), e.getMessage());
    assertEquals(1, asked.size(), "asked about no operation after close");
    assertEquals(OperationState.UNCERTAIN, h.state(first), "nothing written after close");
    assertEquals(OperationState.UNCERTAIN, h.state(second));
  }

  @Test
  void closeLeavesTheAppsSchedulerAndExecutorRunning() throws Exception {
    ScheduledExecutorService appScheduler = Executors.newSingleThreadScheduledExecutor();
    ExecutorService appPool = Executors.newSingleThreadExecutor();
    try {
      IdempotentExecutor idem = IdempotentExecutor.builder()
          .scheduler(dev.idem.core.spi.Scheduler.of(appScheduler)).asyncExecutor(appPool)
          .retryPolicy(RetryPolicy.builder().baseDelay(Duration.ofMillis(1)).maxDelay(Duration.ofMillis(1))
              .jitter(Jitter.NONE).build()).build();
      ScriptedTransport t = new ScriptedTransport(new VirtualTime()).then(status(503), status(201));
      assertEquals(201, idem.executeAsync(order(1), t).get(LONG.toSeconds(), TimeUnit.SECONDS).response().status());
      idem.close();
      assertFalse(appScheduler.isShutdown(), "the app's scheduler is the app's to shut down");
      assertFalse(appPool.isShutdown(), "the app's executor is the app's to shut down");
    } finally {
      appScheduler.shutdownNow();
      appPool.shutdownNow();
    }
  }

  @Test
  void noIdemThreadOutlivesClose() throws Exception {
    Set<Thread> before = Thread.getAllStackTraces().keySet();
    IdempotentExecutor idem = IdempotentExecutor.builder()
        .retryPolicy(RetryPolicy.builder().baseDelay(Duration.ofMillis(1)).maxDelay(Duration.ofMillis(1))
            .jitter(Jitter.NONE).attemptTimeout(Duration.ofSeconds(30)).build()).build();
    // An asynchronous call that waits out a backoff and completes on another thread, and a
    // synchronous one with an attempt timeout: the scheduler and the pool both start.
    ExecutorService client = Executors.newSingleThreadExecutor();
    try {
      ScriptedTransport t = new ScriptedTransport(new VirtualTime()).then(status(503), status(201));
      CompletableFuture<Outcome> f = idem.executeAsync(order(1), (request, key) ->
          CompletableFuture.supplyAsync(() -> t.sendAsync(request, key).join(), client));
      assertEquals(201, f.get(LONG.toSeconds(), TimeUnit.SECONDS).response().status());
      idem.execute(order(2), new ScriptedTransport(new VirtualTime()).then(status(201)));
    } finally {
      client.shutdownNow();
    }
    List<Thread> started = idemThreadsSince(before);
    assertTrue(started.stream().anyMatch(th -> th.getName().startsWith("idem-scheduler-")), started.toString());
    assertTrue(started.stream().anyMatch(th -> th.getName().startsWith("idem-async-")), started.toString());
    assertTrue(started.stream().allMatch(Thread::isDaemon), "daemon threads: they never hold the JVM open");

    idem.close();

    for (Thread th : started) {
      // close() waited for its pools to terminate; a thread may take a moment to leave run().
      th.join(LONG.toMillis());
      assertFalse(th.isAlive(), th.getName() + " outlived close()");
    }
  }

  @Test
  void aSynchronousUserStartsNoThread() throws Exception {
    Set<Thread> before = Thread.getAllStackTraces().keySet();
    try (IdempotentExecutor idem = IdempotentExecutor.builder()
        .retryPolicy(RetryPolicy.builder().baseDelay(Duration.ofMillis(1)).maxDelay(Duration.ofMillis(1))
            .jitter(Jitter.NONE).build()).build()) {
      assertEquals(201, idem.execute(order(1), new ScriptedTransport(new VirtualTime()).then(status(503), status(201)))
          .response().status());
      assertEquals(List.of(), idemThreadsSince(before));
    }
  }

  private static List<Thread> idemThreadsSince(Set<Thread> before) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(th -> th.getName().startsWith("idem-") && !before.contains(th))
        .collect(Collectors.toList());
  }
}
