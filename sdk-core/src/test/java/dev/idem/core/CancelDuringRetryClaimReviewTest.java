package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Takeover;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The single-flight drain (7ea016a) and the executeAsync javadoc: "a call for the same operation
 * made after the cancel waits until that attempt has ended and is recorded, then starts over from
 * the journal with the same key", so that it never "takes this live execution's lease as a dead
 * process's". The drain only waits for an attempt on the wire: a cancel that comes while the
 * cancelled execution is taking its retry's claim (the journal write before the send, an fsync on
 * the embedded journal) ends the drain at once, although that claim is held and is only given back
 * later, on the pool. The next call for the operation then takes the claim over as if this process
 * had died: the journal gets an invented AMBIGUOUS attempt ("the process that held this attempt
 * stopped...") for a request never sent, and the cancelled execution's give-back, now fenced, is
 * reported as a background failure that fails the app's next, unrelated call.
 *
 * <p>Found by a review on 2026-12-05 (spring-client2).
 */
class CancelDuringRetryClaimReviewTest {
  private static final long LONG = 10;

  private final CountDownLatch claimLanded = new CountDownLatch(1);
  private final CountDownLatch claimMayReturn = new CountDownLatch(1);
  private final CountDownLatch giveBackTried = new CountDownLatch(1);

  /** The second claim (the retry after the backoff) lands, then its thread waits before going on. */
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

    @Override
    public OperationRecord transition(OperationId id, Lease lease, Transition transition) throws IdempotencyException {
      try {
        return super.transition(id, lease, transition);
      } finally {
        if (lease.generation() == 2) {
          giveBackTried.countDown(); // the cancelled execution giving its retry's claim back
        }
      }
    }
  };

  @AfterEach
  void release() {
    claimMayReturn.countDown();
  }

  @Test
  void aCallAfterACancelDuringTheRetrysClaimDoesNotTakeTheClaimOverAsADeadProcesss() throws Exception {
    RetryPolicy quick = RetryPolicy.builder().maxAttempts(3).baseDelay(Duration.ofMillis(1))
        .maxDelay(Duration.ofMillis(1)).jitter(Jitter.NONE).build();
    ScriptedTransport transport = new ScriptedTransport(new VirtualTime()).then(status(503)).otherwise(status(201));
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    try (IdempotentExecutor idem = IdempotentExecutor.builder().journal(slowRetryClaim).retryPolicy(quick).build()) {
      CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
      assertTrue(claimLanded.await(LONG, TimeUnit.SECONDS), "the retry's claim reached the journal");
      assertTrue(first.cancel(true)); // a WebClient timeout(), say: nothing is on the wire

      // The same operation again (a retry() after the timeout): it should wait for the claim above.
      CompletableFuture<Outcome> again = idem.executeAsync(op, transport);
      claimMayReturn.countDown();
      Outcome outcome = again.get(LONG, TimeUnit.SECONDS);
      assertTrue(giveBackTried.await(LONG, TimeUnit.SECONDS), "the cancelled execution gave its claim back");

      assertEquals(201, outcome.response().status());
      OperationRecord r = slowRetryClaim.find(op.id()).orElseThrow();
      assertEquals(OperationState.SUCCEEDED, r.state());
      for (AttemptRecord a : r.attempts()) {
        if (Takeover.REASON.equals(a.reason())) {
          fail("the journal holds an invented AMBIGUOUS attempt (" + a + ") although only " + transport.count()
              + " requests were sent: the call after the cancel took this live process's claim over as a dead"
              + " process's; attempts: " + r.attempts());
        }
      }
      assertEquals(transport.count(), r.attempts().size(), "one attempt recorded per request sent: " + r.attempts());
      try {
        Operation next = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
        idem.execute(next, new ScriptedTransport(new VirtualTime()).otherwise(status(201)));
      } catch (IllegalStateException e) {
        fail("an unrelated call was refused for a background failure the cancel left: " + e.getMessage());
      }
    }
  }
}
