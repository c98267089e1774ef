package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.hold;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 24: cancelling an asynchronous execution used to take the driver's lock and write the
 * journal on the cancelling thread, so a cancel waited for whatever journal call the execution was
 * in. Now cancel returns at once and the executor's pool writes what is left; and a failure of
 * that write, which no future can carry any more, is reported by the next call instead of vanishing.
 */
class CancelWithoutJournalWaitTest {
  private static final Duration LONG = Duration.ofSeconds(10);

  private final CountDownLatch journalMayGoOn = new CountDownLatch(1);
  private final CountDownLatch blockedInClaim = new CountDownLatch(1);
  private final CountDownLatch givenBack = new CountDownLatch(1);
  private final List<String> writersAfterBlock = new CopyOnWriteArrayList<>();

  /** Blocks in the second claim (the retry after the backoff); records who writes after it. */
  private final ForwardingJournal blockingOnRetry = new ForwardingJournal(new InMemoryJournal()) {
    private final AtomicInteger claims = new AtomicInteger();

    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      if (claims.incrementAndGet() == 2) {
        blockedInClaim.countDown();
        try {
          journalMayGoOn.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return super.claim(id, owner, now, leaseFor);
    }

    @Override
    public OperationRecord transition(OperationId id, Lease lease, Transition transition) throws IdempotencyException {
      boolean afterBlock = blockedInClaim.getCount() == 0;
      if (afterBlock) {
        writersAfterBlock.add(Thread.currentThread().getName());
      }
      OperationRecord r = super.transition(id, lease, transition);
      if (afterBlock) {
        givenBack.countDown();
      }
      return r;
    }
  };

  @AfterEach
  void release() {
    journalMayGoOn.countDown();
  }

  @Test
  void cancelReturnsAtOnceWhileTheJournalIsStuckAndThePoolGivesTheClaimBack() throws Exception {
    RetryPolicy quick = RetryPolicy.builder().maxAttempts(3).baseDelay(Duration.ofMillis(1))
        .maxDelay(Duration.ofMillis(1)).jitter(Jitter.NONE).build();
    ScriptedTransport transport = new ScriptedTransport(new VirtualTime()).then(status(503)).otherwise(status(201));
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    try (IdempotentExecutor idem = IdempotentExecutor.builder().journal(blockingOnRetry).retryPolicy(quick).build()) {
      CompletableFuture<Outcome> f = idem.executeAsync(op, transport);
      assertTrue(blockedInClaim.await(LONG.toSeconds(), TimeUnit.SECONDS), "the retry reached the journal");

      // Before: cancel waited here for the stuck claim (the driver's lock), for as long as it took.
      assertTimeoutPreemptively(Duration.ofSeconds(5), () -> assertTrue(f.cancel(true)),
          "cancel waited for the journal");
      assertTrue(f.isCancelled());
      assertTrue(writersAfterBlock.isEmpty(), "nothing written on the cancelling thread");

      journalMayGoOn.countDown();
      assertTrue(givenBack.await(LONG.toSeconds(), TimeUnit.SECONDS), "the claim taken meanwhile was given back");
      assertEquals(1, writersAfterBlock.size());
      assertTrue(writersAfterBlock.get(0).startsWith("idem-async-"), "written on " + writersAfterBlock);
      OperationRecord r = blockingOnRetry.find(op.id()).orElseThrow();
      assertEquals(OperationState.PENDING, r.state(), "PENDING with its key, due again");
      assertEquals(1, r.attempts().size());
      assertEquals(1, transport.count(), "nothing sent after the cancel");
    }
  }

  @Test
  void aJournalFailureAfterACancelIsReportedByTheNextCall() throws Exception {
    AtomicBoolean failWrites = new AtomicBoolean();
    JournalException diskFull = new JournalException("disk full", null);
    ForwardingJournal failing = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
        if (failWrites.get()) {
          throw diskFull;
        }
        super.recordAttempt(id, lease, attempt);
      }
    };
    Harness h = new Harness(failing, Harness.POLICY, b -> { });
    CompletableFuture<ResponseSnapshot> onTheWire = new CompletableFuture<>();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    CompletableFuture<Outcome> f = h.executor.executeAsync(op, h.transport(op).then(hold(onTheWire)));
    assertTrue(f.cancel(true));

    // The attempt ends after the cancel: recording it as ambiguous fails, and nobody is waiting.
    failWrites.set(true);
    onTheWire.complete(ScriptedTransport.response(201));
    failWrites.set(false);

    Operation next = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> h.executor.execute(next, h.transport(next).then(status(201))));
    assertSame(diskFull, e.getCause());
    assertTrue(e.getMessage().contains("before anything was journaled or sent"), e.getMessage());
    assertFalse(failing.find(next.id()).isPresent(), "the refused call journaled nothing");
    // Reported once: the call after it goes through.
    assertEquals(201, h.executor.execute(next, h.transport(next).then(status(201))).response().status());
    // The cancelled operation is not lost: IN_FLIGHT under its lease, resumed with its key once it expires.
    OperationRecord r = failing.find(op.id()).orElseThrow();
    assertEquals(OperationState.IN_FLIGHT, r.state());
    assertNull(r.response());
  }
}
