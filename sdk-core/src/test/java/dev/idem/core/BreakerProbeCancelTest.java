package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A half-open breaker's probe permission, taken by an attempt that is then cancelled before it is
 * sent, is never given back: the breaker stays HALF_OPEN with no probe left, and refuses the host
 * for ever.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class BreakerProbeCancelTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(503));

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  @Test
  void aProbeCancelledBeforeItIsSentLeavesTheBreakerAbleToRecover() throws Exception {
    run(true);
  }

  /** Control: the same without the cancel passes. */
  @Test
  void controlWithoutTheCancel() throws Exception {
    run(false);
  }

  private void run(boolean cancel) throws Exception {
    AtomicReference<CompletableFuture<Outcome>> toCancel = new AtomicReference<>();
    CircuitBreakerSettings breaker = CircuitBreakerSettings.builder().slidingWindowSize(2).minimumCalls(2)
        .openFor(Duration.ofSeconds(10)).halfOpenProbes(1).build();
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .circuitBreaker(breaker).retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofSeconds(60)).build())
        .listener(e -> {
          // The caller cancels just as the half-open probe is admitted (another thread, in real life).
          if (e instanceof IdemEvent.AttemptStarted && toCancel.get() != null) {
            toCancel.get().cancel(false);
          }
        }).build();

    // Two 503s open the breaker.
    assertThrows(OperationFailedException.class, () -> idem.execute(order(1), host));
    assertThrows(OperationFailedException.class, () -> idem.execute(order(2), host));

    // An async call finds the breaker open and waits for the half-open probe; it is cancelled as
    // the probe is admitted, before anything is sent.
    Operation probe = order(3);
    CompletableFuture<Outcome> f = idem.executeAsync(probe, host);
    if (cancel) {
      toCancel.set(f);
    }
    time.advance(Duration.ofSeconds(11));
    if (cancel) {
      assertTrue(f.isCancelled());
      assertEquals(0, host.attempts(probe.key()), "the cancelled probe was never sent");
    }
    toCancel.set(null);

    // Long after, the host is healthy again: the breaker must let a probe through.
    time.advance(Duration.ofHours(1));
    host.behave(FakeHost.always(201));
    Operation later = order(4);
    Outcome out = idem.execute(later, host);  // fails today: OperationPendingException, breaker open
    assertEquals(201, out.response().status());
  }
}
