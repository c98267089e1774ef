package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.support.OwnThreads;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.Map;
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
 * Regression test (found by a review this session).
 *
 * <p>Review of c6bd74ee: the same ordering as RestartAfterCancelledFlightJoinsNewFlightTest, with an ordinary
 * pool, seen from a resume pass. {@code leadAsync} tells the flight's followers
 * {@code LeaderCancelled} (running their callbacks on the cancelling thread) before it leaves the
 * flight. A one-lane resume pass that waited on the flight wakes at once, reads the operation
 * again ({@code dueAfterFollowing}), joins the flight again, finds the same, already failed
 * flight still registered, is told {@code LeaderCancelled} again, reads again, and so on, in a
 * busy loop of journal reads for as long as the cancelling thread is busy with the other
 * followers' callbacks.
 *
 * <p>Staged: an {@code executeAsync} got a 503, its backoff ended, and its retry waits for the busy
 * pool (as in PassFollowingCancelledBackoffSendsDueOperationTest). A second {@code executeAsync} of
 * the same order (a double submit) waits on it; the app's code on that second future does some
 * work when it completes (here: it waits, boundedly, for the pass's journal reads to pile up). A
 * resume pass waits on the flight too. The app cancels the first future: the pass is woken, and
 * the second call's callback runs on the cancelling thread before the flight is left.
 *
 * <p>User-visible consequence: a resume pass (or an outbox delivery's restart, on the pool) spins
 * a CPU and hammers the journal (with JdbcJournal, one SELECT per turn) for as long as the app's
 * callbacks on the other waiting calls run, instead of waiting for the flight to be left; with a
 * slow callback, thousands of reads of one row. Leaving the flight before telling the followers,
 * as {@code leaveNotBegun} does, gives the pass the flight at its first join.
 */
class PassDoesNotSpinOnCancelledFlightTest {
  private static final long LONG = 10;
  private static final int SPIN = 200;

  private final VirtualTime time = new VirtualTime();
  private final ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "idem-test-async"));
  private final CountDownLatch poolBusy = new CountDownLatch(1);
  private final CountDownLatch poolMayGoOn = new CountDownLatch(1);
  private final AtomicInteger passReads = new AtomicInteger();
  private volatile Thread passThread;
  private final ForwardingJournal journal = new ForwardingJournal(new InMemoryJournal()) {
    @Override
    public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
      if (Thread.currentThread() == passThread) {
        passReads.incrementAndGet();
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

  @AfterEach
  void stop() {
    poolMayGoOn.countDown();
    idem.close();
    pool.shutdownNow();
  }

  @Test
  void aResumePassWaitingOnTheCancelledFlightDoesNotBusyLoopOnJournalReads() throws Exception {
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    assertEquals(1, transport.count());
    pool.execute(() -> {
      poolBusy.countDown();
      try {
        poolMayGoOn.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    assertTrue(poolBusy.await(LONG, TimeUnit.SECONDS));
    time.advance(Duration.ofSeconds(1)); // the backoff ends: the retry waits for the busy pool

    // A second call of the same order waits on the first; the app's code runs when it completes.
    CompletableFuture<Outcome> second = idem.executeAsync(op, transport);
    AtomicInteger readsDuringCallback = new AtomicInteger(-1);
    second.whenComplete((o, e) -> {
      int before = passReads.get();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      while (passReads.get() - before < SPIN && System.nanoTime() < deadline) {
        Thread.onSpinWait(); // the app's callback at work, bounded
      }
      readsDuringCallback.set(passReads.get() - before);
    });

    AtomicReference<Thread> caller = new AtomicReference<>();
    CompletableFuture<ResumeSummary> pass = OwnThreads.supply(() -> {
      caller.set(Thread.currentThread());
      passThread = Thread.currentThread();
      try {
        return idem.resumePending(Map.of("create-order", ResumeHandler.of(transport, o -> { }, e -> { })));
      } catch (IdempotencyException e) {
        throw new IllegalStateException(e);
      }
    });
    while (!pass.isDone() && (caller.get() == null || caller.get().getState() != Thread.State.WAITING)) {
      Thread.onSpinWait(); // until the pass waits on the flight
    }
    assertFalse(pass.isDone(), "the pass waits for the execution in its backoff");

    assertTrue(first.cancel(true), "the app's timeout");
    poolMayGoOn.countDown();
    ResumeSummary summary = pass.get(LONG, TimeUnit.SECONDS);

    assertTrue(readsDuringCallback.get() < 5, "while the cancelling thread ran the other waiting call's callback,"
        + " the resume pass read the operation " + readsDuringCallback.get() + " times (the callback waits for " + SPIN + ", 2 s at most)"
        + ": it rejoined the cancelled flight, still registered, and was told LeaderCancelled again, in a busy loop;"
        + " summary " + summary);
  }
}
