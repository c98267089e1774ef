package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Takeover;
import dev.idem.core.support.OwnThreads;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An async execution cancelled while its retry's claim is in the journal keeps the operation's
 * single flight until it has given that claim back: a call for the same operation made meanwhile,
 * synchronous or not, waits and then starts over from the journal with the same key (never taking
 * the claim over as a dead process's), and close ends such a call at once, without waiting for the
 * claim, while still returning only once the claim is given back.
 */
class CancelledFlightHeldTest {
  private static final long LONG = 10;

  private final VirtualTime time = new VirtualTime();
  private final ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "idem-test-async"));
  private final CountDownLatch claimLanded = new CountDownLatch(1);
  private final CountDownLatch claimMayReturn = new CountDownLatch(1);

  /** The second claim (the retry's, after the backoff) lands, then its thread waits before going on. */
  private final ForwardingJournal slowRetryClaim = new ForwardingJournal(new InMemoryJournal()) {
    private final AtomicInteger claims = new AtomicInteger();

    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      Optional<Lease> lease = super.claim(id, owner, now, leaseFor);
      if (claims.incrementAndGet() == 2) {
        claimLanded.countDown();
        try {
          claimMayReturn.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return lease;
    }
  };

  private final ScriptedTransport transport = new ScriptedTransport(time).then(status(503)).otherwise(status(201));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(slowRetryClaim).clock(time.clock())
      .scheduler(time.scheduler()).asyncExecutor(pool)
      .retryPolicy(RetryPolicy.builder().maxAttempts(3).baseDelay(Duration.ofSeconds(1))
          .maxDelay(Duration.ofSeconds(1)).jitter(Jitter.NONE).build())
      .build();

  @AfterEach
  void stop() {
    claimMayReturn.countDown();
    idem.close();
    pool.shutdownNow();
  }

  /** Starts the operation, lets its first attempt fail with 503, and cancels it during the retry's claim. */
  private void cancelDuringTheRetrysClaim() throws Exception {
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    time.advance(Duration.ofSeconds(1)); // the backoff: the retry's claim goes to the pool
    assertTrue(claimLanded.await(LONG, TimeUnit.SECONDS), "the retry's claim reached the journal");
    assertTrue(first.cancel(true));
  }

  @Test
  void aSynchronousCallWaitsForTheCancelledClaimThenSendsWithTheSameKey() throws Exception {
    cancelDuringTheRetrysClaim();

    AtomicReference<Thread> caller = new AtomicReference<>();
    CompletableFuture<Outcome> again = OwnThreads.supply(() -> {
      caller.set(Thread.currentThread());
      try {
        return idem.execute(op, transport);
      } catch (IdempotencyException e) {
        throw new IllegalStateException(e);
      }
    });
    while (!again.isDone() && (caller.get() == null || caller.get().getState() != Thread.State.WAITING)) {
      Thread.onSpinWait(); // until the call waits on the flight (it has nothing else to wait for)
    }
    assertFalse(again.isDone(), "waits for the cancelled execution's claim");
    claimMayReturn.countDown();
    assertEquals(201, again.get(LONG, TimeUnit.SECONDS).response().status());

    OperationRecord r = slowRetryClaim.find(op.id()).orElseThrow();
    assertEquals(OperationState.SUCCEEDED, r.state());
    assertEquals(2, transport.count());
    assertEquals(2, r.attempts().size(), "one attempt per request sent: " + r.attempts());
    assertFalse(r.attempts().stream().anyMatch(a -> Takeover.REASON.equals(a.reason())), "no takeover: " + r.attempts());
    assertEquals(1, transport.sent().stream().map(s -> s.key()).distinct().count(), "the same key on every attempt");
  }

  @Test
  void closeEndsACallWaitingForTheCancelledClaimAtOnceAndReturnsOnceTheClaimIsGivenBack() throws Exception {
    cancelDuringTheRetrysClaim();
    CompletableFuture<Outcome> again = idem.executeAsync(op, transport);
    assertFalse(again.isDone(), "waits for the cancelled execution's claim");

    CompletableFuture<Void> closed = OwnThreads.closeUntilItWaits(idem);
    ExecutionException ended = assertThrows(ExecutionException.class,
        () -> again.get(LONG, TimeUnit.SECONDS), "ended by close while the claim is still in the journal");
    assertInstanceOf(OperationPendingException.class, ended.getCause());
    assertFalse(closed.isDone(), "close waits for the claim and its give-back");

    claimMayReturn.countDown();
    closed.get(LONG, TimeUnit.SECONDS);
    OperationRecord r = slowRetryClaim.find(op.id()).orElseThrow();
    assertEquals(OperationState.PENDING, r.state(), "the claim was given back before close returned");
    assertEquals(1, transport.count());
    assertEquals(1, r.attempts().size(), "only the attempt sent: " + r.attempts());
  }
}
