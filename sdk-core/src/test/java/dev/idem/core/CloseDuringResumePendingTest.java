package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Sleeper;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.OwnThreads;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link IdempotentExecutor#close()} promises that the app may close its journal as soon as it
 * returns, and waits for the calls that write the journal on the app's threads. {@code resumePending}
 * was not counted: a startup or periodic resume pass (claims, attempts, transitions, outcomes
 * recorded as delivered, on the caller's thread and, with {@code resumeConcurrency} above 1, on
 * threads of its own) went on writing after close returned, on a journal the app had closed (on a
 * real one, "journal is closed" in the middle of an operation, which is then left IN_FLIGHT until
 * its lease expires), and went on claiming and sending the rest of the due operations after close.
 * A pass waiting for leases held elsewhere slept through close.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class CloseDuringResumePendingTest {
  private static final long LONG_SECONDS = 10;

  private final VirtualTime time = new VirtualTime();
  /** While set, every attempt's journal write blocks until {@link #writeMayEnd}. */
  private final AtomicBoolean blockAttempts = new AtomicBoolean();
  private final CountDownLatch inWrite = new CountDownLatch(1);
  private final CountDownLatch writeMayEnd = new CountDownLatch(1);
  /** Set by the test when the app closes its journal, as it does right after the executor's close. */
  private final AtomicBoolean journalClosed = new AtomicBoolean();
  private final List<String> writesOnAClosedJournal = new CopyOnWriteArrayList<>();

  private final ForwardingJournal journal = new ForwardingJournal(new InMemoryJournal()) {
    @Override
    public BeginResult begin(NewOperation operation) throws IdempotencyException {
      return written("begin", super.begin(operation));
    }

    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      return written("claim", super.claim(id, owner, now, leaseFor));
    }

    @Override
    public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
      if (blockAttempts.get()) {
        inWrite.countDown();
        try {
          writeMayEnd.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      super.recordAttempt(id, lease, attempt);
      written("recordAttempt", null);
    }

    @Override
    public OperationRecord transition(OperationId id, Lease lease, Transition t) throws IdempotencyException {
      return written("transition", super.transition(id, lease, t));
    }

    @Override
    public OperationRecord abandon(OperationId id, Transition t) throws IdempotencyException {
      return written("abandon", super.abandon(id, t));
    }

    @Override
    public boolean recordOutcomeDelivered(OperationId id, Instant at) throws IdempotencyException {
      return written("recordOutcomeDelivered", super.recordOutcomeDelivered(id, at));
    }

    @Override
    public int recordOutcomesDelivered(List<OperationId> ids, Instant at) throws IdempotencyException {
      return written("recordOutcomesDelivered", super.recordOutcomesDelivered(ids, at));
    }
  };

  /** A write that ends after the app closed the journal: a real journal would have thrown. */
  private <T> T written(String what, T result) {
    if (journalClosed.get()) {
      writesOnAClosedJournal.add(what);
    }
    return result;
  }

  private IdempotentExecutor executor(int concurrency, Sleeper sleeper) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).scheduler(time.scheduler())
        .sleeper(sleeper).asyncExecutor(Runnable::run).random(() -> 0.5).owner("test-owner")
        .resumeConcurrency(concurrency).build();
  }

  private static List<OperationRecord> enqueue(IdempotentExecutor idem, int n) throws IdempotencyException {
    List<OperationRecord> queued = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      queued.add(idem.enqueue(Operation.builder("create-order", Requests.order("{\"n\":" + i + "}")).build()));
    }
    return queued;
  }

  /**
   * Every operation either took effect once (SUCCEEDED) or was never sent and is PENDING with the
   * key it was journaled with, its claim given back: none is left IN_FLIGHT by the pass close
   * stopped. Returns how many are PENDING.
   */
  private int assertSentOrPendingWithItsKey(List<OperationRecord> queued, FakeHost host) throws Exception {
    int pending = 0;
    for (OperationRecord q : queued) {
      OperationRecord r = journal.find(q.id()).orElseThrow();
      assertEquals(q.id().key(), r.id().key());
      if (r.state() == OperationState.SUCCEEDED) {
        assertEquals(1, host.attempts(q.id().key()), q.id() + ": one attempt with its key");
      } else {
        assertEquals(OperationState.PENDING, r.state(), q.id() + " after a pass close stopped");
        assertEquals(List.of(), r.attempts(), q.id() + " was never sent");
        assertEquals(0, host.attempts(q.id().key()), q.id() + " was never sent");
        pending++;
      }
    }
    return pending;
  }

  @ParameterizedTest(name = "resumeConcurrency {0}")
  @ValueSource(ints = {1, 2})
  void closeWaitsForAResumePassWritingTheJournalAndThePassStopsBeforeItsNextOperation(int concurrency)
      throws Exception {
    IdempotentExecutor idem = executor(concurrency, time.sleeper());
    List<OperationRecord> queued = enqueue(idem, 6);
    FakeHost host = new FakeHost(time, FakeHost.always(201));
    Map<String, ResumeHandler> handlers = Map.of("create-order", ResumeHandler.of(host, o -> {}, f -> {}));
    blockAttempts.set(true);

    CompletableFuture<Object> caller = OwnThreads.supply(() -> {
      try {
        return idem.resumePending(handlers);
      } catch (IdempotencyException | RuntimeException e) {
        return e;
      }
    });
    assertTrue(inWrite.await(LONG_SECONDS, TimeUnit.SECONDS), "the pass reached its journal write");

    CompletableFuture<Void> closed = OwnThreads.closeUntilItWaits(idem);
    boolean returnedDuringTheWrite = closed.isDone();
    if (returnedDuringTheWrite) {
      journalClosed.set(true);  // the app closes its journal as soon as close returns
    }

    writeMayEnd.countDown();
    closed.get(LONG_SECONDS, TimeUnit.SECONDS);
    journalClosed.set(true);
    Object ended = caller.get(LONG_SECONDS, TimeUnit.SECONDS);

    assertFalse(returnedDuringTheWrite, "close() returned while resumePending was still writing the journal");
    assertEquals(List.of(), writesOnAClosedJournal, "journal writes after the app closed the journal");
    IllegalStateException e = assertInstanceOf(IllegalStateException.class, ended,
        "resumePending closed during its pass: " + ended);
    assertTrue(e.getMessage().contains("close()") && e.getMessage().contains("resumePending"), e.getMessage());
    assertTrue(host.totalAttempts() <= concurrency, "sent after close: " + host.totalAttempts());
    assertTrue(assertSentOrPendingWithItsKey(queued, host) >= queued.size() - concurrency);
  }

  /**
   * A handler that closes the executor (as an app does on a fatal outcome) runs inside the pass: on
   * the caller's thread, or on one of the pass's own threads. Close must not wait for the pass it
   * is part of (its whole grace, 10 s), and the pass stops after it.
   */
  @ParameterizedTest(name = "resumeConcurrency {0}")
  @ValueSource(ints = {1, 2})
  void aHandlerThatClosesTheExecutorStopsThePassWithoutWaitingForIt(int concurrency) throws Exception {
    IdempotentExecutor idem = executor(concurrency, time.sleeper());
    List<OperationRecord> queued = enqueue(idem, 6);
    FakeHost host = new FakeHost(time, FakeHost.always(201));
    AtomicReference<Thread> closedOn = new AtomicReference<>();
    Map<String, ResumeHandler> handlers = Map.of("create-order", ResumeHandler.of(host, o -> {
      if (closedOn.compareAndSet(null, Thread.currentThread())) {
        idem.close();
      }
    }, f -> {}));
    Thread[] caller = new Thread[1];

    IllegalStateException e = Assertions.assertTimeoutPreemptively(Duration.ofSeconds(5),
        () -> Assertions.assertThrows(IllegalStateException.class, () -> {
          caller[0] = Thread.currentThread();
          idem.resumePending(handlers);
        }), "close from inside the pass waited for the pass itself");

    assertTrue(e.getMessage().contains("close()") && e.getMessage().contains("resumePending"), e.getMessage());
    if (concurrency > 1) {
      assertNotEquals(caller[0], closedOn.get(), "closed on one of the pass's own threads");
    }
    assertTrue(host.totalAttempts() <= concurrency, "sent after close: " + host.totalAttempts());
    assertTrue(assertSentOrPendingWithItsKey(queued, host) >= queued.size() - concurrency);
  }

  /**
   * resumePending(handlers, waitFor) sleeps until leases held elsewhere expire (minutes, at
   * startup). Close waits for the pass, so it wakes that sleep, as it wakes a synchronous call's
   * backoff: the pass ends at once, and the interrupt that woke it is not left on the app's thread.
   */
  @Test
  void closeWakesAPassWaitingForLeasesHeldElsewhere() throws Exception {
    CountDownLatch sleeping = new CountDownLatch(1);
    // A wait that only an interrupt ends, as one of minutes would for this test.
    IdempotentExecutor idem = executor(1, d -> {
      sleeping.countDown();
      new CountDownLatch(1).await();
    });
    OperationRecord leased = enqueue(idem, 1).get(0);
    journal.claim(leased.id(), "elsewhere", time.now(), Duration.ofMinutes(1)).orElseThrow();
    FakeHost host = new FakeHost(time, FakeHost.always(201));
    Map<String, ResumeHandler> handlers = Map.of("create-order", ResumeHandler.of(host, o -> {}, f -> {}));
    ExecutorService threads = Executors.newSingleThreadExecutor();
    try {
      Future<Object[]> caller = threads.submit(() -> {
        try {
          return new Object[] {idem.resumePending(handlers, Duration.ofMinutes(5)),
              Thread.currentThread().isInterrupted()};
        } catch (IdempotencyException | RuntimeException e) {
          return new Object[] {e, Thread.currentThread().isInterrupted()};
        }
      });
      assertTrue(sleeping.await(LONG_SECONDS, TimeUnit.SECONDS), "the pass waits for the lease held elsewhere");

      idem.close();

      Object[] ended = caller.get(LONG_SECONDS, TimeUnit.SECONDS);
      IllegalStateException e = assertInstanceOf(IllegalStateException.class, ended[0], String.valueOf(ended[0]));
      assertTrue(e.getMessage().contains("close()") && e.getMessage().contains("resumePending"), e.getMessage());
      assertEquals(false, ended[1], "close's interrupt was left on the app's thread");
      OperationRecord r = journal.find(leased.id()).orElseThrow();
      assertEquals(OperationState.IN_FLIGHT, r.state(), "the lease held elsewhere is untouched");
      assertEquals("elsewhere", r.owner());
      assertEquals(0, host.totalAttempts());
    } finally {
      threads.shutdownNow();
    }
  }
}
