package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * d56e85b keeps a cancelled async execution's single flight until its claim in progress is given
 * back, "so that a call already inside close's wait still cannot take the lease over". Close itself
 * does not: it abandons a live async execution that is taking its retry's claim on the pool, and
 * leadAsync leaves the flight at once (the result failed, not cancelled), while the claim is still
 * held and only given back later. A synchronous call already in progress when close came (a
 * {@code resume} on another thread, which close waits for) then leads, takes that live claim over
 * as a dead process's and journals an invented AMBIGUOUS attempt for a request never sent; the
 * abandoned execution's give-back is then fenced.
 *
 * <p>Found by a review on 2026-12-05 (async3).
 */
class CloseDuringRetryClaimTakeoverReviewTest {
  private static final long LONG = 10;

  private final VirtualTime time = new VirtualTime();
  private final ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "idem-test-async"));
  private final CountDownLatch claimLanded = new CountDownLatch(1);
  private final CountDownLatch claimMayReturn = new CountDownLatch(1);
  private final CountDownLatch resumeReads = new CountDownLatch(1);
  private final CountDownLatch resumeMayRead = new CountDownLatch(1);
  private final AtomicReference<Thread> resumer = new AtomicReference<>();

  /** The retry's claim (the second) lands, then waits; the resume's first read waits too. */
  private final ForwardingJournal journal = new ForwardingJournal(new InMemoryJournal()) {
    private final AtomicInteger claims = new AtomicInteger();

    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      Optional<Lease> lease = super.claim(id, owner, now, leaseFor);
      if (claims.incrementAndGet() == 2) {
        claimLanded.countDown();
        await(claimMayReturn);
      }
      return lease;
    }

    @Override
    public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
      if (Thread.currentThread() == resumer.get() && resumeReads.getCount() > 0) {
        resumeReads.countDown();
        await(resumeMayRead);
      }
      return super.find(id);
    }
  };

  private final ScriptedTransport transport = new ScriptedTransport(time).then(status(503)).otherwise(status(201));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .scheduler(time.scheduler()).asyncExecutor(pool)
      .retryPolicy(RetryPolicy.builder().maxAttempts(3).baseDelay(Duration.ofSeconds(1))
          .maxDelay(Duration.ofSeconds(1)).jitter(Jitter.NONE).build())
      .build();

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @AfterEach
  void stop() {
    claimMayReturn.countDown();
    resumeMayRead.countDown();
    idem.close();
    pool.shutdownNow();
  }

  @Test
  void aCallInProgressWhenCloseAbandonsARetrysClaimDoesNotTakeThatClaimOver() throws Exception {
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    time.advance(Duration.ofSeconds(1)); // the backoff: the retry's claim goes to the pool
    assertTrue(claimLanded.await(LONG, TimeUnit.SECONDS), "the retry's claim reached the journal");

    CompletableFuture<Object> resumed = OwnThreads.supply(() -> {
      resumer.set(Thread.currentThread());
      try {
        return idem.resume(op.id(), transport);
      } catch (IdempotencyException e) {
        return e;
      }
    });
    assertTrue(resumeReads.await(LONG, TimeUnit.SECONDS), "the resume is in progress (close will wait for it)");

    CompletableFuture<Void> closed = OwnThreads.closeUntilItWaits(idem);
    assertTrue(first.isCompletedExceptionally(), "close ended the async execution");
    resumeMayRead.countDown();
    Object told = resumed.get(LONG, TimeUnit.SECONDS);
    assertFalse(closed.isDone(), "close still waits for the retry's claim and its give-back");
    claimMayReturn.countDown();
    closed.get(LONG, TimeUnit.SECONDS);

    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertEquals(1, transport.count(), "nothing was sent after close");
    assertFalse(r.attempts().stream().anyMatch(a -> Takeover.REASON.equals(a.reason())),
        "the resume in progress during close took the abandoned execution's live claim over as a dead process's"
        + " (it was told: " + told + "); the journal holds an invented AMBIGUOUS attempt although only "
        + transport.count() + " request was sent: " + r.attempts());
    assertEquals(transport.count(), r.attempts().size(), "one attempt recorded per request sent: " + r.attempts());
    assertEquals(OperationState.PENDING, r.state());
  }
}
