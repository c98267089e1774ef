package dev.idem.core.spi.adapter;

import static dev.idem.core.support.ScriptedTransport.response;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.Operation;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link AdapterSupport#callCancel}: an adapter whose caller cancelled a synchronous call ends
 * its backoff, whether the cancel comes while the thread waits or just before (while the attempt's
 * outcome is journaled, which no interrupt may disturb), and only until it is cleared; it ends
 * that call's waits only, not those of another call nested in it on the same thread.
 */
class CancelBackOffTest {
  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  /**
   * A transport like an adapter's: 503 until its call is cancelled, then refuses to send, as not
   * sent with an InterruptedIOException cause.
   */
  private static Transport refusingOnceCancelled(AtomicBoolean cancelled, AtomicInteger sent, Runnable onSend) {
    return (request, key) -> {
      if (cancelled.get()) {
        throw new RequestNotSentException("cancelled", new InterruptedIOException("cancelled"));
      }
      sent.incrementAndGet();
      onSend.run();
      return response(503);
    };
  }

  @Test
  void aCancelDuringTheBackoffWakesItAndLeavesNoInterrupt() throws Exception {
    List<Duration> waits = new CopyOnWriteArrayList<>();
    AtomicBoolean cancelled = new AtomicBoolean();
    CallCancel[] cancel = new CallCancel[1];
    // A backoff that only an interrupt ends; the cancel comes from inside it, on the same thread.
    Harness h = new Harness(Harness.POLICY, b -> b.sleeper(d -> {
      waits.add(d);
      cancelled.set(true);
      cancel[0].cancel();
      assertFalse(new CountDownLatch(1).await(10, java.util.concurrent.TimeUnit.SECONDS), "unreachable");
      throw new AssertionError("the backoff was not cut short");
    }));
    AdapterSupport support = AdapterSupport.of(h.executor, AdapterSupport.DEFAULT_KEY_HEADER, KeyHeaderFormat.BARE,
        UntaggedPolicy.PASS_THROUGH);
    Operation op = order(1);
    AtomicInteger sent = new AtomicInteger();
    try (CallCancel c = support.callCancel()) {
      cancel[0] = c;
      assertThrows(OperationPendingException.class,
          () -> h.executor.execute(op, refusingOnceCancelled(cancelled, sent, () -> { })));
      assertFalse(Thread.currentThread().isInterrupted(), "the interrupt was left on the app's thread");
    }
    assertEquals(1, waits.size());
    assertEquals(1, sent.get());
    assertEquals(OperationState.PENDING, h.state(op));
  }

  @Test
  void aCancelBeforeTheBackoffSkipsItAndAClearRestoresBackoff() throws IdempotencyException {
    Harness h = new Harness();
    AdapterSupport support = AdapterSupport.of(h.executor, AdapterSupport.DEFAULT_KEY_HEADER, KeyHeaderFormat.BARE,
        UntaggedPolicy.PASS_THROUGH);
    Operation op = order(1);
    AtomicBoolean cancelled = new AtomicBoolean();
    AtomicInteger sent = new AtomicInteger();
    Thread self = Thread.currentThread();
    try (CallCancel cancel = support.callCancel()) {
      // Cancelled while the attempt is on the wire, before the executor journals its 503 and backs off.
      assertThrows(OperationPendingException.class, () -> h.executor.execute(op, refusingOnceCancelled(cancelled,
          sent, () -> {
            cancelled.set(true);
            cancel.cancel();
          })));
      assertFalse(self.isInterrupted());
    }
    assertEquals(List.of(), h.time.sleeps(), "the backoff was skipped");
    assertEquals(1, sent.get());
    assertEquals(OperationState.PENDING, h.state(op));

    // Cleared: the thread's next call backs off as before.
    Operation next = order(2);
    AtomicInteger sentNext = new AtomicInteger();
    assertThrows(IdempotencyException.class,
        () -> h.executor.execute(next, refusingOnceCancelled(new AtomicBoolean(), sentNext, () -> { })));
    assertEquals(Harness.POLICY.maxAttempts(), sentNext.get());
    assertTrue(!h.time.sleeps().isEmpty(), "backed off between attempts");
  }

  @Test
  void aCancelEndsItsOwnCallOnlyNotACallNestedInItOnTheSameThread() throws Exception {
    Harness h = new Harness();
    AdapterSupport support = AdapterSupport.of(h.executor, AdapterSupport.DEFAULT_KEY_HEADER, KeyHeaderFormat.BARE,
        UntaggedPolicy.PASS_THROUGH);
    Operation outer = order(1);
    Operation inner = Operation.builder("create-token", Requests.order("{\"token\":1}")).build();
    CallCancel[] outerCancel = new CallCancel[1];
    AtomicBoolean outerCancelled = new AtomicBoolean();
    AtomicInteger outerSent = new AtomicInteger();
    AtomicInteger innerSent = new AtomicInteger();
    // The outer call is cancelled while its attempt is on the wire, during the inner call's first
    // attempt: the inner call (never cancelled by its caller) still waits out its backoff.
    Transport innerTransport = (request, key) -> {
      if (innerSent.incrementAndGet() == 1) {
        outerCancelled.set(true);
        outerCancel[0].cancel();
        return response(503);
      }
      return response(201);
    };
    // The outer call's attempt makes the inner keyed call first, as an interceptor fetching a token
    // does; the inner call's own cancel handle is cancelled just before it is closed, and its close
    // must take back its own mark only.
    Transport outerTransport = (request, key) -> {
      if (outerCancelled.get()) {
        throw new RequestNotSentException("cancelled", new InterruptedIOException("cancelled"));
      }
      outerSent.incrementAndGet();
      try (CallCancel innerCancel = support.callCancel()) {
        h.executor.execute(inner, innerTransport);
        innerCancel.cancel();
      }
      return response(503);
    };
    try (CallCancel c = support.callCancel()) {
      outerCancel[0] = c;
      assertThrows(OperationPendingException.class, () -> h.executor.execute(outer, outerTransport));
      assertFalse(Thread.currentThread().isInterrupted());
    }
    assertEquals(List.of(Harness.POLICY.baseDelay()), h.time.sleeps(),
        "the inner call waited out its backoff, and the cancelled outer call none");
    assertEquals(2, innerSent.get());
    assertEquals(OperationState.SUCCEEDED, h.state(inner));
    assertEquals(1, outerSent.get());
    assertEquals(OperationState.PENDING, h.state(outer));
  }

  /**
   * Two handles taken at one depth before either call starts (an adapter path that makes a keyed
   * call of its own between taking its handle and calling the executor): each belongs to its own
   * call. The later handle's call runs first; a cancel of the earlier handle, for the call still to
   * come, must not skip that call's backoffs.
   */
  @Test
  void aCancelOfAHandleTakenForALaterCallAtTheSameDepthLeavesTheCallMadeNowAlone() throws Exception {
    Harness h = new Harness();
    AdapterSupport support = AdapterSupport.of(h.executor, AdapterSupport.DEFAULT_KEY_HEADER, KeyHeaderFormat.BARE,
        UntaggedPolicy.PASS_THROUGH);
    Operation outer = order(1);
    Operation inner = Operation.builder("create-token", Requests.order("{\"token\":1}")).build();
    AtomicBoolean outerCancelled = new AtomicBoolean();
    AtomicInteger outerSent = new AtomicInteger();
    AtomicInteger innerSent = new AtomicInteger();
    try (CallCancel outerCancel = support.callCancel()) {
      // The inner call is made after the outer handle was taken, before the outer call starts;
      // the outer call's caller cancels it during the inner call's first attempt.
      Transport innerTransport = (request, key) -> {
        if (innerSent.incrementAndGet() == 1) {
          outerCancelled.set(true);
          outerCancel.cancel();
          return response(503);
        }
        return response(201);
      };
      try (CallCancel innerCancel = support.callCancel()) {
        assertEquals(201, h.executor.execute(inner, innerTransport).response().status());
      }
      assertEquals(List.of(Harness.POLICY.baseDelay()), h.time.sleeps(), "the inner call waited out its backoff");

      assertThrows(OperationPendingException.class,
          () -> h.executor.execute(outer, refusingOnceCancelled(outerCancelled, outerSent, () -> { })));
      assertFalse(Thread.currentThread().isInterrupted());
    }
    assertEquals(2, innerSent.get());
    assertEquals(OperationState.SUCCEEDED, h.state(inner));
    assertEquals(0, outerSent.get(), "the cancelled outer call sent nothing");
    assertEquals(OperationState.PENDING, h.state(outer));
    assertEquals(List.of(Harness.POLICY.baseDelay()), h.time.sleeps(), "the cancelled outer call waited out nothing");
  }

  /**
   * Closing a cancelled handle takes back its own cancel only: another call's handle taken at the
   * same depth stays cancelled, and that call skips its backoff.
   */
  @Test
  void closingACancelledHandleLeavesTheCancelOfAnotherCallAtTheSameDepth() throws Exception {
    Harness h = new Harness();
    AdapterSupport support = AdapterSupport.of(h.executor, AdapterSupport.DEFAULT_KEY_HEADER, KeyHeaderFormat.BARE,
        UntaggedPolicy.PASS_THROUGH);
    Operation outer = order(1);
    Operation inner = Operation.builder("create-token", Requests.order("{\"token\":1}")).build();
    AtomicInteger outerSent = new AtomicInteger();
    try (CallCancel outerCancel = support.callCancel()) {
      outerCancel.cancel(); // a call timeout that elapsed before the call reached the executor
      try (CallCancel innerCancel = support.callCancel()) {
        innerCancel.cancel();
        assertThrows(OperationPendingException.class, () -> h.executor.execute(inner,
            refusingOnceCancelled(new AtomicBoolean(true), new AtomicInteger(), () -> { })));
      }
      // The outer call: its first attempt goes out (its transport learns of the cancel later,
      // as OkHttp's does once the attempt on the wire was cut), and it must not back off.
      Transport outerTransport = (request, key) -> {
        if (outerSent.incrementAndGet() == 1) {
          return response(503);
        }
        throw new RequestNotSentException("cancelled", new InterruptedIOException("cancelled"));
      };
      assertThrows(OperationPendingException.class, () -> h.executor.execute(outer, outerTransport));
      assertFalse(Thread.currentThread().isInterrupted());
    }
    assertEquals(List.of(), h.time.sleeps(), "the cancelled outer call backed off: the inner handle's close took"
        + " back its cancel");
    assertEquals(OperationState.PENDING, h.state(outer));
    assertEquals(OperationState.PENDING, h.state(inner));
  }

  @Test
  void aCancelledCallWaitingForAConcurrentExecutionStopsWaitingAndLeavesThatExecutionAlone() throws Exception {
    CountDownLatch leaderBacksOff = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Harness h = new Harness(Harness.POLICY, b -> b.sleeper(d -> {
      leaderBacksOff.countDown();
      release.await();
    }));
    AdapterSupport support = AdapterSupport.of(h.executor, AdapterSupport.DEFAULT_KEY_HEADER, KeyHeaderFormat.BARE,
        UntaggedPolicy.PASS_THROUGH);
    Operation op = order(1);
    AtomicInteger sent = new AtomicInteger();
    Transport transport = (request, key) -> sent.incrementAndGet() == 1 ? response(503) : response(201);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Outcome> leader = pool.submit(() -> h.executor.execute(op, transport));
      assertTrue(leaderBacksOff.await(10, TimeUnit.SECONDS), "the first call never backed off");
      try (CallCancel cancel = support.callCancel()) {
        // Cancelled before it joins the first call (a call timeout that elapsed while it journaled).
        cancel.cancel();
        OperationPendingException e = assertThrows(OperationPendingException.class,
            () -> h.executor.execute(op, transport));
        assertEquals(op.id(), e.operationId());
      }
      assertFalse(Thread.currentThread().isInterrupted());
      assertEquals(1, sent.get(), "the cancelled call sent nothing");
      assertFalse(h.state(op).isTerminal());
      release.countDown();
      assertEquals(201, leader.get(10, TimeUnit.SECONDS).response().status(), "the first call went on");
      assertEquals(2, sent.get());
      assertEquals(OperationState.SUCCEEDED, h.state(op));
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }

  /**
   * The app interrupts the thread during a backoff that its call's cancel also wakes, just before
   * or just after: the app's interrupt is its own, and must be left on the thread (the call ends as
   * an interrupted one), however the executor takes back its own.
   */
  @Test
  void anInterruptOfTheAppsInABackoffTheCancelAlsoWokeIsKept() throws Exception {
    for (boolean appFirst : new boolean[] {true, false}) {
      CallCancel[] cancel = new CallCancel[1];
      AtomicBoolean cancelled = new AtomicBoolean();
      // A sleeper as Thread.sleep: the first interrupt ends it, and it throws with the flag cleared.
      Harness h = new Harness(Harness.POLICY, b -> b.sleeper(d -> {
        Thread self = Thread.currentThread();
        if (appFirst) {
          self.interrupt();  // the app's, which wakes the sleep
          assertTrue(Thread.interrupted());
          cancelled.set(true);
          cancel[0].cancel();  // lands before the executor takes the wait back
        } else {
          cancelled.set(true);
          cancel[0].cancel();  // wakes the sleep
          assertTrue(Thread.interrupted());
          self.interrupt();  // the app's, as the sleep returns
        }
        throw new InterruptedException("woken");
      }));
      AdapterSupport support = AdapterSupport.of(h.executor, AdapterSupport.DEFAULT_KEY_HEADER, KeyHeaderFormat.BARE,
          UntaggedPolicy.PASS_THROUGH);
      Operation op = order(1);
      AtomicInteger sent = new AtomicInteger();
      boolean interruptedAfter;
      try (CallCancel c = support.callCancel()) {
        cancel[0] = c;
        assertThrows(OperationPendingException.class,
            () -> h.executor.execute(op, refusingOnceCancelled(cancelled, sent, () -> { })));
      } finally {
        interruptedAfter = Thread.interrupted();
      }
      assertTrue(interruptedAfter, "the app's interrupt was lost (app first: " + appFirst + ")");
      assertEquals(1, sent.get());
      assertEquals(OperationState.PENDING, h.state(op));
    }
  }
}
