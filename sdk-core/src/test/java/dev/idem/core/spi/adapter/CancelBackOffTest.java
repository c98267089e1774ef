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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link AdapterSupport#cancelBackOff}: an adapter whose caller cancelled a synchronous call ends
 * its backoff, whether the cancel comes while the thread waits or just before (while the attempt's
 * outcome is journaled, which no interrupt may disturb), and only until it is cleared.
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
    AdapterSupport[] support = new AdapterSupport[1];
    // A backoff that only an interrupt ends; the cancel comes from inside it, on the same thread.
    Harness h = new Harness(Harness.POLICY, b -> b.sleeper(d -> {
      waits.add(d);
      cancelled.set(true);
      support[0].cancelBackOff(Thread.currentThread());
      assertFalse(new CountDownLatch(1).await(10, java.util.concurrent.TimeUnit.SECONDS), "unreachable");
      throw new AssertionError("the backoff was not cut short");
    }));
    support[0] = AdapterSupport.of(h.executor, AdapterSupport.DEFAULT_KEY_HEADER, KeyHeaderFormat.BARE,
        UntaggedPolicy.PASS_THROUGH);
    Operation op = order(1);
    AtomicInteger sent = new AtomicInteger();
    try {
      assertThrows(OperationPendingException.class,
          () -> h.executor.execute(op, refusingOnceCancelled(cancelled, sent, () -> { })));
      assertFalse(Thread.currentThread().isInterrupted(), "the interrupt was left on the app's thread");
    } finally {
      support[0].clearBackOffCancel(Thread.currentThread());
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
    try {
      // Cancelled while the attempt is on the wire, before the executor journals its 503 and backs off.
      assertThrows(OperationPendingException.class, () -> h.executor.execute(op, refusingOnceCancelled(cancelled,
          sent, () -> {
            cancelled.set(true);
            support.cancelBackOff(self);
          })));
      assertFalse(self.isInterrupted());
    } finally {
      support.clearBackOffCancel(self);
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
}
