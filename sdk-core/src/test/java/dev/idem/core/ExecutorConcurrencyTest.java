package dev.idem.core;

import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.StaleOwnerException;
import dev.idem.core.spi.Transition;
import dev.idem.core.spi.Transport;
import static dev.idem.core.support.ScriptedTransport.fail;
import static dev.idem.core.support.ScriptedTransport.hold;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Interruption, cancellation, single-flight and racing executions. */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class ExecutorConcurrencyTest {
  private static final long WAIT_SECONDS = 10;

  private final Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();

  @Test
  void syncInterruptionDuringTheWaitLeavesThePendingOperationResumable() throws Exception {
    CountDownLatch sleeping = new CountDownLatch(1);
    AtomicBoolean blockOnce = new AtomicBoolean(true);
    AtomicReference<Harness> holder = new AtomicReference<>();
    Harness h = new Harness(Harness.POLICY, b -> b.sleeper(d -> {
      if (blockOnce.getAndSet(false)) {
        sleeping.countDown();
        new CountDownLatch(1).await(); // until interrupted
        throw new AssertionError("not interrupted");
      }
      holder.get().time.sleeper().sleep(d);
    }));
    holder.set(h);
    ScriptedTransport t = h.transport(op).then(status(503), status(200));
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicBoolean stillInterrupted = new AtomicBoolean();
    Thread worker = new Thread(() -> {
      try {
        h.executor.execute(op, t);
      } catch (Throwable e) {
        thrown.set(e);
      }
      stillInterrupted.set(Thread.currentThread().isInterrupted());
    }, "idem-worker");
    worker.start();
    assertTrue(sleeping.await(WAIT_SECONDS, TimeUnit.SECONDS));
    worker.interrupt();
    worker.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
    assertFalse(worker.isAlive());

    OperationPendingException e = assertInstanceOf(OperationPendingException.class, thrown.get());
    assertEquals(OperationState.PENDING, e.state());
    assertEquals(op.key(), e.key());
    assertTrue(stillInterrupted.get(), "the interrupt flag must survive for the caller");
    assertEquals(OperationState.PENDING, h.state(op));
    assertEquals(1, t.count());

    Outcome out = h.executor.execute(op, t);
    assertEquals(200, out.response().status());
    assertEquals(2, t.count());
    assertTrue(t.sent().stream().allMatch(s -> s.key().equals(op.key())));
    assertEquals(2, out.attempts().size());
  }

  @Test
  void syncInterruptionWhileOnTheWireCountsTheAttemptAsAmbiguous() throws Exception {
    Harness h = new Harness();
    CountDownLatch sending = new CountDownLatch(1);
    ScriptedTransport inner = h.transport(op).then(status(200)).otherwise(fail(new ConnectException("refused")));
    AtomicBoolean blockOnce = new AtomicBoolean(true);
    Transport t = (r, k) -> {
      if (blockOnce.getAndSet(false)) {
        inner.send(r, k);
        sending.countDown();
        try {
          new CountDownLatch(1).await();
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted while reading the response");
        }
      }
      return inner.send(r, k);
    };
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread worker = new Thread(() -> {
      try {
        h.executor.execute(op, t);
      } catch (Throwable e) {
        thrown.set(e);
      }
    });
    worker.start();
    assertTrue(sending.await(WAIT_SECONDS, TimeUnit.SECONDS));
    worker.interrupt();
    worker.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
    assertInstanceOf(OperationPendingException.class, thrown.get());
    assertEquals(OperationState.PENDING, h.state(op));
    assertTrue(h.record(op).hasAmbiguousAttempt());

    // the resumed execution only sees refused connections, but the interrupted attempt may have landed
    OperationUncertainException later = assertThrows(OperationUncertainException.class, () -> h.executor.execute(op, t));
    assertEquals(OperationState.UNCERTAIN, later.state());
    assertTrue(inner.sent().stream().allMatch(s -> s.key().equals(op.key())));
  }

  @Test
  void asyncCancellationDuringTheWaitLeavesThePendingOperationResumable() throws Exception {
    Harness h = new Harness();
    ScriptedTransport t = h.transport(op).then(status(503), status(200));
    CompletableFuture<Outcome> f = h.executor.executeAsync(op, t);
    assertEquals(1, t.count());
    assertEquals(1, h.time.pendingTasks(), "the retry should be waiting on the scheduler");
    assertTrue(f.cancel(true));
    assertEquals(OperationState.PENDING, h.state(op));
    h.time.advance(Duration.ofMinutes(10));
    assertEquals(1, t.count(), "a cancelled execution must not send again");
    assertEquals(OperationState.PENDING, h.state(op));

    Outcome out = Driver.ASYNC.run(h, op, t);
    assertEquals(200, out.response().status());
    assertEquals(2, t.count());
    assertTrue(t.sent().stream().allMatch(s -> s.key().equals(op.key())));
  }

  @Test
  void asyncCancellationWhileOnTheWireNeverEndsFailed() throws Exception {
    Harness h = new Harness();
    CompletableFuture<ResponseSnapshot> wire = new CompletableFuture<>();
    ScriptedTransport t = h.transport(op).then(hold(wire)).otherwise(status(200));
    CompletableFuture<Outcome> f = h.executor.executeAsync(op, t);
    assertTrue(f.cancel(true));
    assertEquals(OperationState.IN_FLIGHT, h.state(op), "the attempt is still on the wire");
    wire.completeExceptionally(new SocketTimeoutException("Read timed out"));
    assertEquals(OperationState.PENDING, h.state(op));
    assertTrue(h.record(op).hasAmbiguousAttempt());
    h.time.runUntilIdle();
    assertEquals(1, t.count());
    Outcome out = Driver.SYNC.run(h, op, t);
    assertEquals(200, out.response().status());
    assertEquals(op.key(), t.sent().get(1).key());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void anotherOwnersLiveLeaseMeansNothingIsSent(Driver d) throws Exception {
    Harness h = new Harness();
    h.journal.begin(new NewOperation(op.id(), null, Fingerprinter.defaults().fingerprint(op.request()), op.request(),
        h.time.now()));
    Lease theirs = h.journal.claim(op.id(), "other-process", h.time.now(), Duration.ofMinutes(2)).orElseThrow();
    ScriptedTransport t = h.transport(op).otherwise(status(200));
    OperationPendingException e = assertThrows(OperationPendingException.class, () -> d.run(h, op, t));
    assertEquals(0, t.count());
    assertTrue(e.getMessage().contains("other-process"), e.getMessage());
    // once their lease has expired, this executor takes over under a new generation
    h.time.jump(Duration.ofMinutes(3));
    Outcome out = d.run(h, op, t);
    assertEquals(1, t.count());
    // their attempt may have been sent before they vanished: the takeover counts it as ambiguous
    assertEquals(2, out.attempts().size(), out.attempts().toString());
    assertTrue(out.attempts().get(0).isAmbiguous());
    assertEquals(theirs.generation(), out.attempts().get(0).generation());
    assertEquals(theirs.generation() + 1, out.attempts().get(1).generation());
    assertThrows(StaleOwnerException.class, () -> h.journal.transition(op.id(), theirs,
        Transition.finish(OperationState.FAILED, h.time.now(), null, "late")));
    assertEquals(OperationState.SUCCEEDED, h.state(op));
  }

  /** Eight threads execute one operation at once: one sends, everyone gets the same outcome. */
  @Test
  void singleFlightAcrossThreads() throws Exception {
    int threads = 8;
    CountDownLatch begun = new CountDownLatch(threads);
    Harness h = new Harness(new CountingJournal(begun), Harness.POLICY, b -> {});
    CountDownLatch firstSend = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicReference<Thread> sender = new AtomicReference<>();
    ScriptedTransport script = new ScriptedTransport(h.time).then(status(503), status(200, java.util.Map.of(), "ok"));
    Transport t = (r, k) -> {
      Harness.assertInFlight(h.executor.journal(), op.id(), Harness.OWNER, new ScriptedTransport.Sent(0, k, r,
          h.time.now(), ""));
      if (sender.compareAndSet(null, Thread.currentThread())) {
        firstSend.countDown();
        try {
          if (!release.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new AssertionError("never released");
          }
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
      }
      return script.send(r, k);
    };
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    List<AtomicReference<Object>> results = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      AtomicReference<Object> result = new AtomicReference<>();
      results.add(result);
      Thread w = new Thread(() -> {
        try {
          go.await();
          result.set(h.executor.execute(op, t));
        } catch (Throwable e) {
          result.set(e);
        }
      }, "caller-" + i);
      workers.add(w);
      w.start();
    }
    go.countDown();
    assertTrue(firstSend.await(WAIT_SECONDS, TimeUnit.SECONDS));
    assertTrue(begun.await(WAIT_SECONDS, TimeUnit.SECONDS));
    // every other caller has joined the flight and parks on the leader's result
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    for (Thread w : workers) {
      if (w == sender.get()) {
        continue;
      }
      while (w.getState() != Thread.State.WAITING) {
        assertTrue(System.nanoTime() < deadline, w.getName() + " never parked: " + w.getState());
        Thread.onSpinWait();
      }
    }
    release.countDown();
    for (Thread w : workers) {
      w.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
      assertFalse(w.isAlive());
    }
    assertEquals(2, script.count(), "exactly one send per attempt");
    Object first = results.get(0).get();
    assertInstanceOf(Outcome.class, first, String.valueOf(first));
    for (AtomicReference<Object> r : results) {
      assertSame(first, r.get(), "every caller gets the same outcome");
    }
    assertEquals(op.key(), ((Outcome) first).key());
    assertFalse(((Outcome) first).fromJournal());
    assertEquals(OperationState.SUCCEEDED, h.state(op));
  }

  @Test
  void singleFlightForAsyncCallers() throws Exception {
    Harness h = new Harness();
    CompletableFuture<ResponseSnapshot> wire = new CompletableFuture<>();
    ScriptedTransport t = h.transport(op).then(hold(wire)).otherwise(status(500));
    List<CompletableFuture<Outcome>> futures = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      futures.add(h.executor.executeAsync(op, t));
    }
    assertEquals(1, t.count());
    wire.complete(ScriptedTransport.response(200));
    h.time.runUntilIdle();
    Outcome first = futures.get(0).join();
    for (CompletableFuture<Outcome> f : futures) {
      assertEquals(first, f.join());
    }
    assertEquals(1, t.count());
    // cancelling a follower's copy does not cancel the leader
    CompletableFuture<ResponseSnapshot> wire2 = new CompletableFuture<>();
    Operation op2 = Operation.builder("create-order", Requests.order("{\"amount\":2}")).build();
    ScriptedTransport t2 = h.transport(op2).then(hold(wire2));
    CompletableFuture<Outcome> leader = h.executor.executeAsync(op2, t2);
    CompletableFuture<Outcome> follower = h.executor.executeAsync(op2, t2);
    follower.cancel(true);
    wire2.complete(ScriptedTransport.response(201));
    assertEquals(201, leader.join().response().status());
    assertEquals(1, t2.count());
  }

  /**
   * A caller begins (reading the record), another execution runs an ambiguous attempt and leaves
   * the operation PENDING, then the first caller claims it. Its history must include the ambiguous
   * attempt: giving up after only SAFE failures of its own must still end UNCERTAIN, never FAILED.
   */
  @ParameterizedTest
  @EnumSource(Driver.class)
  void anExecutionThatClaimsAfterAnotherOneSeesItsAttempts(Driver d) throws Exception {
    AtomicReference<Runnable> onBegin = new AtomicReference<>();
    Harness h = new Harness(new HookedJournal(onBegin), Harness.POLICY, b -> {});
    ScriptedTransport t = h.transport(op)
        .then(fail(new SocketTimeoutException("Read timed out")), status(503))
        .otherwise(fail(new ConnectException("refused")));
    onBegin.set(() -> {
      onBegin.set(null);
      // the other execution: one ambiguous attempt, then its caller gives up waiting
      CompletableFuture<Outcome> other = h.executor.executeAsync(op, t);
      other.cancel(true);
    });
    OperationUncertainException e = assertThrows(OperationUncertainException.class, () -> d.run(h, op, t));
    assertEquals(OperationState.UNCERTAIN, h.state(op));
    List<AttemptRecord> history = h.record(op).attempts();
    assertEquals(history.size(), e.attempts().size());
    for (int i = 0; i < history.size(); i++) {
      assertEquals(i + 1, history.get(i).number(), "attempt numbers must not restart: " + history);
    }
    assertNotEquals(0, t.count());
    assertTrue(t.sent().stream().allMatch(s -> s.key().equals(op.key())));
  }

  /**
   * The leader's begin claims the operation it creates (Journal.beginAndClaim). A second execution
   * of the same operation that begins right then finds it IN_FLIGHT under this very owner: it must
   * join the leader's flight, not claim it over as a restarted instance would (which sent it under
   * a second generation and recorded a phantom AMBIGUOUS attempt for the first). Checked to fail
   * with the flight joined after the begin, as it was before the begin claimed.
   */
  @ParameterizedTest
  @EnumSource(Driver.class)
  void anExecutionBegunWhileTheLeaderClaimsAtItsBeginJoinsItsFlight(Driver d) throws Exception {
    AtomicReference<Runnable> onClaim = new AtomicReference<>();
    Harness h = new Harness(new ClaimHookedJournal(onClaim), Harness.POLICY, b -> {});
    CompletableFuture<ResponseSnapshot> wire = new CompletableFuture<>();
    ScriptedTransport t = h.transport(op).then(hold(wire)).otherwise(status(500));
    AtomicReference<CompletableFuture<Outcome>> other = new AtomicReference<>();
    onClaim.set(() -> {
      onClaim.set(null);
      other.set(h.executor.executeAsync(op, t));
    });
    wire.complete(ScriptedTransport.response(201));
    Outcome leader = d.run(h, op, t);
    h.time.runUntilIdle();
    assertEquals(201, leader.response().status());
    assertEquals(leader, other.get().get(WAIT_SECONDS, TimeUnit.SECONDS));
    assertEquals(1, t.count(), "one send");
    OperationRecord r = h.record(op);
    assertEquals(OperationState.SUCCEEDED, r.state());
    assertEquals(1, r.generation(), "claimed once");
    assertEquals(1, r.attempts().size(), String.valueOf(r.attempts()));
    assertEquals(Classification.SUCCESS, r.attempts().get(0).classification());
  }

  /**
   * The executor closes between the begin, which claimed the new operation, and the async call's
   * first step: nothing is sent, and the claim is given back, so the operation is PENDING and due
   * at once, as the caller is told, not IN_FLIGHT under a lease nobody runs.
   */
  @Test
  void anAsyncCallClosedBeforeItsFirstStepGivesTheBeginsClaimBack() throws Exception {
    AtomicReference<Runnable> onClaim = new AtomicReference<>();
    Harness h = new Harness(new ClaimHookedJournal(onClaim), Harness.POLICY, b -> {});
    ScriptedTransport t = h.transport(op).then(status(201));
    onClaim.set(() -> {
      onClaim.set(null);
      h.executor.close();
    });
    CompletableFuture<Outcome> f = h.executor.executeAsync(op, t);
    h.time.runUntilIdle();
    java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
        () -> f.get(WAIT_SECONDS, TimeUnit.SECONDS));
    assertInstanceOf(OperationPendingException.class, e.getCause());
    assertEquals(0, t.count());
    OperationRecord r = h.record(op);
    assertEquals(OperationState.PENDING, r.state(), "given back, due now");
    assertEquals(List.of(), r.attempts());
  }

  /**
   * A leader whose begin is refused (its payload is another request's under the same key) sent
   * nothing: a follower that joined its flight meanwhile, with the journaled payload, is not told
   * the leader's refusal; it starts over and sends its own operation.
   */
  @Test
  void aFollowerOfALeaderRefusedAtBeginStartsOver() throws Exception {
    AtomicReference<Runnable> onBegin = new AtomicReference<>();
    Harness h = new Harness(new HookedJournal(onBegin, true), Harness.POLICY, b -> {});
    h.executor.enqueue(op);
    Operation other = Operation.builder("create-order", Requests.order("{\"amount\":999}")).key(op.key()).build();
    ScriptedTransport t = h.transport(op).then(status(201));
    AtomicReference<CompletableFuture<Outcome>> follower = new AtomicReference<>();
    onBegin.set(() -> {
      onBegin.set(null);
      follower.set(h.executor.executeAsync(op, t)); // joins the flight of `other`, which leads
    });
    IdempotencyKeyReusedException refused = assertThrows(IdempotencyKeyReusedException.class,
        () -> h.executor.execute(other, t));
    assertFalse(refused.detectedByServer());
    h.time.runUntilIdle();
    Outcome out = follower.get().get(WAIT_SECONDS, TimeUnit.SECONDS);
    assertEquals(201, out.response().status());
    assertEquals(1, t.count());
    assertEquals(OperationState.SUCCEEDED, h.state(op));
  }

  /**
   * A caller that did not cancel must not see a cancellation: when the leader's caller cancels in
   * its backoff, followers learn that the operation is still PENDING, as the class contract says,
   * and send nothing ahead of that backoff (a resume pass is the exception: see
   * PassFollowingCancelledBackoffSendsDueOperationTest).
   */
  @Test
  void followersOfACancelledAsyncLeaderGetPendingNotCancellation() throws Exception {
    Harness h = new Harness();
    ScriptedTransport t = h.transport(op).then(status(503)).otherwise(status(200));
    CompletableFuture<Outcome> leader = h.executor.executeAsync(op, t);
    CompletableFuture<Outcome> follower = h.executor.executeAsync(op, t);
    AtomicReference<Throwable> syncFollower = new AtomicReference<>();
    CountDownLatch parked = new CountDownLatch(1);
    Thread syncCaller = new Thread(() -> {
      parked.countDown();
      try {
        h.executor.execute(op, t);
      } catch (Throwable e) {
        syncFollower.set(e);
      }
    });
    syncCaller.start();
    assertTrue(parked.await(WAIT_SECONDS, TimeUnit.SECONDS));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (syncCaller.getState() != Thread.State.WAITING && syncCaller.isAlive()) {
      assertTrue(System.nanoTime() < deadline, "the sync caller never joined the flight");
      Thread.onSpinWait();
    }
    assertTrue(leader.cancel(true));
    syncCaller.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
    assertFalse(follower.isCancelled());
    OperationPendingException e = assertThrows(OperationPendingException.class, () -> Driver.join(follower));
    assertEquals(op.key(), e.key());
    assertInstanceOf(OperationPendingException.class, syncFollower.get());
    assertEquals(OperationState.PENDING, h.state(op));
    assertEquals(1, t.count());
  }

  /** Counts begins, for the single-flight test. */
  private static final class CountingJournal extends ForwardingJournal {
    private final CountDownLatch begun;

    CountingJournal(CountDownLatch begun) {
      super(new InMemoryJournal());
      this.begun = begun;
    }

    @Override
    public BeginResult begin(NewOperation operation) throws IdempotencyException {
      BeginResult r = super.begin(operation);
      begun.countDown();
      return r;
    }
  }

  /** Runs a hook right after begin returns, to interleave another execution. */
  private static final class HookedJournal extends ForwardingJournal {
    private final AtomicReference<Runnable> hook;
    private final boolean before;

    HookedJournal(AtomicReference<Runnable> hook) {
      this(hook, false);
    }

    /** @param before runs the hook before the begin instead of after it */
    HookedJournal(AtomicReference<Runnable> hook, boolean before) {
      super(new InMemoryJournal());
      this.hook = hook;
      this.before = before;
    }

    @Override
    public BeginResult begin(NewOperation operation) throws IdempotencyException {
      if (before) {
        run();
      }
      BeginResult r = super.begin(operation);
      if (!before) {
        run();
      }
      return r;
    }

    private void run() {
      Runnable h = hook.get();
      if (h != null) {
        h.run();
      }
    }
  }

  /** Runs a hook right after a claim returns: in the default beginAndClaim, between the begin and its claim's return. */
  private static final class ClaimHookedJournal extends ForwardingJournal {
    private final AtomicReference<Runnable> hook;

    ClaimHookedJournal(AtomicReference<Runnable> hook) {
      super(new InMemoryJournal());
      this.hook = hook;
    }

    @Override
    public java.util.Optional<Lease> claim(OperationId id, String owner, java.time.Instant now, Duration leaseFor)
        throws IdempotencyException {
      java.util.Optional<Lease> lease = super.claim(id, owner, now, leaseFor);
      Runnable h = hook.get();
      if (h != null) {
        h.run();
      }
      return lease;
    }
  }
}
