package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A concurrent resume pass checks, just before it sends under its batch's claim, that enough of the
 * claim's lease is left ({@code PendingResumer.usableLease}). That check reads the clock; an app's
 * clock (a wrapper over a time service, say) that throws there must not leave the operation's
 * single flight taken and its claim held: the rule is that any throwable between a claim and the
 * send gives the claim back and leaves the flight. Before, every later call of the operation in
 * this process waited for a flight no one led, until close().
 */
class ResumeClockFailureLeavesFlightTest {

  /** The virtual clock, made to throw once on the thread that arms it. */
  private static final class ArmedClock extends Clock {
    private final Clock inner;
    private final AtomicReference<Thread> armed = new AtomicReference<>();
    final IllegalStateException failure = new IllegalStateException("the time service is unavailable");

    ArmedClock(Clock inner) {
      this.inner = inner;
    }

    /** The next read of the clock on this thread throws. */
    void armOnThisThread() {
      armed.set(Thread.currentThread());
    }

    @Override
    public Instant instant() {
      if (armed.compareAndSet(Thread.currentThread(), null)) {
        throw failure;
      }
      return inner.instant();
    }

    @Override
    public ZoneId getZone() {
      return inner.getZone();
    }

    @Override
    public Clock withZone(ZoneId zone) {
      throw new UnsupportedOperationException();
    }
  }

  @Test
  void aClockThatThrowsBeforeTheSendGivesTheClaimBackAndLeavesTheFlight() throws Exception {
    Harness h = new Harness();  // its virtual time and journal; the executor below reads the armed clock
    ArmedClock clock = new ArmedClock(h.time.clock());
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(h.journal).retryPolicy(Harness.POLICY)
        .clock(clock).sleeper(h.time.sleeper()).scheduler(h.time.scheduler()).asyncExecutor(Runnable::run)
        .random(() -> 0.5).owner(Harness.OWNER).resumeConcurrency(2)
        .circuitBreaker(CircuitBreakerSettings.disabled()).build();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    executor.enqueue(op);

    AtomicInteger sends = new AtomicInteger();
    Transport transport = (request, key) -> {
      sends.incrementAndGet();
      return ScriptedTransport.response(201);
    };
    ResumeHandler handler = new ResumeHandler() {
      @Override
      public Transport transport() {
        // The lane's next read of the clock is the lease check before the send.
        clock.armOnThisThread();
        return transport;
      }

      @Override
      public void onSuccess(Outcome outcome) {
      }

      @Override
      public void onFailure(OperationException failure) {
      }
    };
    IllegalStateException thrown = assertThrows(IllegalStateException.class,
        () -> executor.resumePending(Map.of("create-order", handler)));
    assertSame(clock.failure, thrown, "the pass ends with the clock's failure");
    assertEquals(0, sends.get(), "nothing was sent");
    OperationRecord left = h.record(op);
    assertEquals(OperationState.PENDING, left.state(), "the batch's claim is given back: " + left);
    assertEquals(List.of(), left.attempts(), "no attempt is owed for a claim under which nothing was sent");

    CompletableFuture<Outcome> call = executor.executeAsync(op, (AsyncTransport) (request, key) -> {
      sends.incrementAndGet();
      assertEquals(op.id().key(), key, "the operation's own key");
      return CompletableFuture.completedFuture(ScriptedTransport.response(201));
    });
    h.time.runUntilIdle();
    assertTrue(call.isDone(), "the app's call of " + op.id() + " waits for the flight the pass never left;"
        + " the journal holds " + h.state(op));
    assertEquals(201, Harness.Driver.join(call).response().status());
    assertEquals(1, sends.get(), "sent once, by the app's call");
    assertEquals(OperationState.SUCCEEDED, h.state(op));
  }
}
