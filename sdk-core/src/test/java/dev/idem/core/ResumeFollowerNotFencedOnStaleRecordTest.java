package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.support.OwnThreads;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: a call that waited for another execution of its operation here reads it again and is fenced on that read, not on the record from before.
 *
 * <p>Review of b77d4607 ("a one-lane pass claims only what it read again and found due").
 *
 * <p>{@code runSync} now fences its first claim ({@code fenced = true} for every one-lane
 * operation) on the {@code record} it was given, the pass's re-read. But when the flight's join
 * finds another execution of the operation running in this executor, {@code runSync} waits for it
 * and, if that leader ends "not begun" ({@code SingleFlight.leaveNotBegun}: an async execution
 * cancelled while its claim was in the journal keeps the flight until quiet and then releases it
 * so, its followers "start over from the journal"), it loops and leads with the same, now stale,
 * record. The leader changed the operation meanwhile (it gave its claim back: IN_FLIGHT became
 * PENDING), so the fenced claim ({@code claimIfUnchanged} on the stale state) is refused although
 * the operation is PENDING, due now and held by no one. Before this commit the plain claim took it
 * and sent it, as an {@code execute} in the same situation still does (CancelledFlightHeldTest).
 *
 * <p>User-visible consequence: the resume pass does not resume an operation that is due and free;
 * its handler gets an {@link OperationPendingException} saying "another process was claiming or
 * updating it", which is false (only this process touched it), and the summary counts it
 * stillPending; the operation waits for the next pass (on a startup resume: for the app's next
 * periodic pass or restart).
 */
class ResumeFollowerNotFencedOnStaleRecordTest {
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

  @Test
  void aOneLanePassWaitingForACancelledExecutionSendsTheOperationItLeftDue() throws Exception {
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    time.advance(Duration.ofSeconds(1)); // the backoff: the retry's claim goes to the pool
    assertTrue(claimLanded.await(LONG, TimeUnit.SECONDS), "the retry's claim reached the journal");
    assertTrue(first.cancel(true));

    List<Object> told = new CopyOnWriteArrayList<>();
    ResumeHandler handler = ResumeHandler.of(transport, told::add, told::add);
    AtomicReference<Thread> caller = new AtomicReference<>();
    CompletableFuture<ResumeSummary> pass = OwnThreads.supply(() -> {
      caller.set(Thread.currentThread());
      try {
        return idem.resumePending(Map.of("create-order", handler));
      } catch (IdempotencyException e) {
        throw new IllegalStateException(e);
      }
    });
    while (!pass.isDone() && (caller.get() == null || caller.get().getState() != Thread.State.WAITING)) {
      Thread.onSpinWait(); // until the pass waits on the flight (it has nothing else to wait for)
    }
    assertFalse(pass.isDone(), "the pass waits for the cancelled execution's claim");
    // A millisecond passes before the cancelled execution gives its claim back (with a frozen clock the
    // give-back would fall at the pass's own instant, and a later page of the same pass would read it again).
    time.advance(Duration.ofMillis(1));
    claimMayReturn.countDown();
    ResumeSummary summary = pass.get(LONG, TimeUnit.SECONDS);

    OperationRecord r = slowRetryClaim.find(op.id()).orElseThrow();
    assertEquals(OperationState.SUCCEEDED, r.state(), "the cancelled execution gave its claim back (PENDING, due"
        + " now, held by no one) and the resume pass that waited for it did not send it: summary " + summary
        + ", handler told " + told);
    assertEquals(1, summary.succeeded(), "summary " + summary + ", handler told " + told);
  }
}
