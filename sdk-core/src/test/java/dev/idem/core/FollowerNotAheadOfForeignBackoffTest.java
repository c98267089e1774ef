package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: a fenced call that waited for
 * another execution of its operation here reads it again, sends it only if still due, fenced on that read.
 *
 * <p>Review of 58235bd6 ("no fence after following a flight").
 *
 * <p>{@code runSync} now leads with {@code fenced && !followed}: once a one-lane resume pass has
 * waited for another execution of its operation in this executor and that execution ended "not
 * begun" (a cancelled {@code executeAsync} giving its claim back), the pass's first claim is a
 * plain {@code Journal.claim} on the stale record it was handed before the wait. Nothing re-reads
 * the operation or checks it is still due (as {@code resumeOne} does before the wait, and as the
 * fence did after). A plain claim takes any PENDING operation. So if, while this process's
 * execution ended, another instance sharing the journal claimed the operation, sent it, got a 503
 * and queued it PENDING until its backoff (or the server's {@code Retry-After}), the pass claims it
 * at once and sends it again, ahead of that backoff. The same holds for an outbox delivery:
 * {@code runAsync}'s follow lambda passes {@code fenced = false}, and the delivery's due check was
 * made before it followed.
 *
 * <p>User-visible consequence: on a fleet, the very resend storm the fence (b77d4607, 93dee002) was
 * added to prevent comes back whenever the pass (or a delivery) happened to wait for a local
 * execution: the server that asked for 30 s of quiet gets the same key again immediately, and the
 * resume summary counts a success of an operation that was not due.
 */
class FollowerNotAheadOfForeignBackoffTest {
  private static final long LONG = 10;
  private static final Duration FOREIGN_BACKOFF = Duration.ofSeconds(30);

  private final VirtualTime time = new VirtualTime();
  private final ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "idem-test-async"));
  private final CountDownLatch claimLanded = new CountDownLatch(1);
  private final CountDownLatch claimMayReturn = new CountDownLatch(1);
  private final AtomicBoolean otherInstanceSent = new AtomicBoolean();
  private final InMemoryJournal shared = new InMemoryJournal();

  /**
   * The retry's claim (the second) lands, then waits; when this instance's cancelled execution
   * gives that claim back, another instance sharing the journal sends the operation (503) and
   * queues it until its backoff, before this instance's waiting pass starts over.
   */
  private final ForwardingJournal journal = new ForwardingJournal(shared) {
    private final AtomicInteger claims = new AtomicInteger();
    private final AtomicInteger transitions = new AtomicInteger();

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
    public OperationRecord transition(OperationId id, Lease lease, Transition transition)
        throws IdempotencyException {
      OperationRecord r = super.transition(id, lease, transition);
      if (transitions.incrementAndGet() == 2 && r.state() == OperationState.PENDING) {
        // The give-back landed: instance B, on the same journal, claims, sends and queues it.
        Instant now = time.clock().instant();
        Lease b = shared.claim(id, "instance-b", now, Duration.ofMinutes(1)).orElseThrow();
        shared.recordAttempt(id, b, new AttemptRecord(2, b.generation(), now, now, Classification.TRANSIENT, 503,
            null, "HTTP 503", FOREIGN_BACKOFF, "retry"));
        shared.transition(id, b, Transition.retryAt(now, now.plus(FOREIGN_BACKOFF), "HTTP 503"));
        otherInstanceSent.set(true);
      }
      return r;
    }
  };

  private final ScriptedTransport transport = new ScriptedTransport(time).then(status(503)).otherwise(status(201));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .owner("instance-a").scheduler(time.scheduler()).asyncExecutor(pool)
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
  void aPassThatWaitedForALocalExecutionDoesNotResendAheadOfAnotherInstancesBackoff() throws Exception {
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
      Thread.onSpinWait(); // until the pass waits on the flight
    }
    assertFalse(pass.isDone(), "the pass waits for the cancelled execution's claim");
    time.advance(Duration.ofMillis(1));
    claimMayReturn.countDown();
    ResumeSummary summary = pass.get(LONG, TimeUnit.SECONDS);

    assertTrue(otherInstanceSent.get(), "instance B sent and queued the operation before the pass started over");
    OperationRecord r = shared.find(op.id()).orElseThrow();
    assertEquals(1, transport.count(), "instance B queued the operation PENDING until "
        + time.clock().instant().plus(FOREIGN_BACKOFF) + " after its 503, but this instance's resume pass, which"
        + " had waited for its own cancelled execution, claimed it unfenced and resent it at once: journal now "
        + r.state() + " with " + r.attempts().size() + " attempts, summary " + summary + ", handler told " + told);
  }
}
