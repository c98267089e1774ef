package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.spi.AttemptTimeoutException;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.FakeHost;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * attemptTimeout on the synchronous path (issue 14: it was enforced only on the async one). The
 * transport stands for a client blocked in an interruptible wait for an answer that never comes
 * (java.net.http's send blocks that way); fake time drives the executor's scheduler, so nothing
 * really sleeps.
 */
class SyncAttemptTimeoutTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor(RetryPolicy policy) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5).retryPolicy(policy)
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();
  }

  /** Hangs on the attempts listed, as a server that never answers; answers 201 otherwise. */
  private final class HangingTransport implements Transport {
    final List<IdempotencyKey> keys = new ArrayList<>();
    final List<Integer> hangOn;

    HangingTransport(Integer... hangOn) {
      this.hangOn = List.of(hangOn);
    }

    @Override
    public ResponseSnapshot send(RequestSnapshot request, IdempotencyKey key) throws IOException {
      keys.add(key);
      if (!hangOn.contains(keys.size())) {
        return FakeHost.response(201, java.util.Map.of());
      }
      // While this thread waits, time passes: the executor's timer comes due and interrupts it.
      time.advance(Duration.ofSeconds(1));
      try {
        new CountDownLatch(1).await();
        throw new AssertionError("unreachable");
      } catch (InterruptedException e) {
        InterruptedIOException io = new InterruptedIOException("interrupted while waiting for the response");
        io.initCause(e);
        throw io;
      }
    }
  }

  @Test
  void aHungAttemptEndsByItsTimeoutIsAmbiguousAndIsRetriedWithTheSameKey() throws Exception {
    HangingTransport transport = new HangingTransport(1);
    IdempotentExecutor idem = executor(RetryPolicy.builder().attemptTimeout(Duration.ofMillis(200))
        .baseDelay(Duration.ofMillis(100)).jitter(Jitter.NONE).build());
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();

    Outcome out = idem.execute(op, transport);

    assertEquals(List.of(op.key(), op.key()), transport.keys, "two attempts, one key");
    OperationRecord rec = journal.find(op.id()).orElseThrow();
    assertEquals(OperationState.SUCCEEDED, rec.state());
    AttemptRecord first = rec.attempts().get(0);
    assertEquals(Classification.AMBIGUOUS, first.classification());
    assertEquals(AttemptTimeoutException.class.getName(), first.exceptionClass());
    assertEquals(2, out.attempts().size());
    assertFalse(Thread.currentThread().isInterrupted(), "the timer's interrupt does not leak to the caller");
  }

  @Test
  void whenEveryAttemptHangsTheOperationIsUncertainNotPending() throws Exception {
    HangingTransport transport = new HangingTransport(1, 2, 3);
    IdempotentExecutor idem = executor(RetryPolicy.builder().maxAttempts(3).attemptTimeout(Duration.ofSeconds(1))
        .build());
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();

    OperationUncertainException e = assertThrows(OperationUncertainException.class, () -> idem.execute(op, transport));

    assertEquals(op.id(), e.operationId());
    assertEquals(3, transport.keys.size());
    assertEquals(OperationState.UNCERTAIN, journal.find(op.id()).orElseThrow().state());
    assertEquals(3, journal.find(op.id()).orElseThrow().attempts().stream()
        .filter(a -> AttemptTimeoutException.class.getName().equals(a.exceptionClass())).count());
    assertFalse(Thread.currentThread().isInterrupted());
  }

  @Test
  void aCallersOwnInterruptStillLeavesTheOperationPending() throws Exception {
    // Without a timeout, an interrupted attempt means "stop": PENDING, as before.
    Transport interrupted = (request, key) -> {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted");
    };
    IdempotentExecutor idem = executor(RetryPolicy.builder().attemptTimeout(Duration.ofSeconds(1)).build());
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    assertThrows(OperationPendingException.class, () -> idem.execute(op, interrupted));
    assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state());
    Thread.interrupted();
  }
}
