package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Future;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * resumePending with {@code resumeConcurrency}: operations are re-sent at once (so that a durable
 * journal's claims share commits), each still exactly once with its journaled key, and handlers are
 * told one at a time.
 */
class ConcurrentResumeTest {
  private static final int THREADS = 4;

  @Test
  void resumesOperationsConcurrentlyEachOnceWithItsKeyAndTellsHandlersOneAtATime() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.resumeConcurrency(THREADS)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    int n = 250; // more than two pages of 100
    Set<IdempotencyKey> journaled = new HashSet<>();
    for (int i = 0; i < n; i++) {
      Operation op = Operation.builder("create-order", Requests.order("{\"n\":" + i + "}")).build();
      h.executor.enqueue(op);
      journaled.add(op.key());
    }
    // The first THREADS sends wait until all THREADS are in flight together: this passes only if
    // the resumer runs them concurrently (one after another, the first would time out).
    CountDownLatch together = new CountDownLatch(THREADS);
    AtomicInteger overlapped = new AtomicInteger();
    ConcurrentMap<IdempotencyKey, Integer> sends = new ConcurrentHashMap<>();
    Transport transport = (request, key) -> {
      sends.merge(key, 1, Integer::sum);
      together.countDown();
      try {
        if (together.await(10, TimeUnit.SECONDS)) {
          overlapped.incrementAndGet();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return ScriptedTransport.response(201);
    };
    AtomicInteger inHandler = new AtomicInteger();
    AtomicInteger mostInHandler = new AtomicInteger();
    List<Outcome> delivered = new ArrayList<>(); // not thread-safe on purpose: handlers are called one at a time

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order", ResumeHandler.of(transport, o -> {
      mostInHandler.accumulateAndGet(inHandler.incrementAndGet(), Math::max);
      delivered.add(o);
      inHandler.decrementAndGet();
    }, f -> { throw new AssertionError(f); })));

    assertEquals(n, summary.succeeded(), summary.toString());
    assertEquals(n, summary.examined());
    assertEquals(journaled, sends.keySet(), "each went out with the key journaled before");
    assertTrue(sends.values().stream().allMatch(c -> c == 1), "each pending operation sent exactly once");
    assertEquals(n, delivered.size());
    assertEquals(1, mostInHandler.get(), "handlers are told one at a time");
    assertEquals(n, overlapped.get(), "the first " + THREADS + " sends were in flight together");
    assertEquals(0, h.executor.journal().count(OperationState.PENDING));
    for (Outcome o : delivered) {
      assertEquals(OperationState.SUCCEEDED, h.executor.journal().find(o.operationId()).orElseThrow().state());
    }
  }

  @Test
  void aJournalFailureStopsTheConcurrentPassAndLeavesTheRestPendingWithTheirKeys() throws Exception {
    FailingClaims failing = new FailingClaims(30);
    Harness h = new Harness(failing, Harness.POLICY, b -> b.resumeConcurrency(THREADS)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    int n = 250;
    enqueueOrders(h, n);
    ConcurrentMap<IdempotencyKey, Integer> sends = new ConcurrentHashMap<>();
    Transport transport = answering201Counting(sends);

    JournalException thrown = assertThrows(JournalException.class, () -> h.executor.resumePending(
        Map.of("create-order", ResumeHandler.of(transport, o -> { }, f -> { }))));

    assertEquals("disk gone", thrown.getMessage());
    // No resume starts after the failure: the lanes running then end, and nothing more is claimed.
    assertTrue(failing.claims.get() < 30 + THREADS, "claims after the failure: " + failing.claims.get());
    assertTrue(sends.values().stream().allMatch(c -> c == 1), "each sent at most once");
    assertEquals(n - sends.size(), h.executor.journal().count(OperationState.PENDING),
        "every operation not sent stays PENDING for the next resume");
  }

  /**
   * Why: the next page was read only once the last operation of the current one was handed out,
   * with every other lane waiting on the page's lock for the read (which, on a durable journal,
   * also waits for the commit of the claims before it): 64 ms a page, all lanes idle. Now the lane
   * that takes the page's middle operation reads the next, and the others go on meanwhile.
   */
  @Test
  void theNextPageIsReadWhileTheCurrentOneIsStillBeingResumed() throws Exception {
    AtomicInteger sendsStarted = new AtomicInteger();
    List<Integer> sendsStartedAtRead = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch secondPageRead = new CountDownLatch(1);
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
          throws IdempotencyException {
        sendsStartedAtRead.add(sendsStarted.get());
        List<OperationRecord> page = super.findDue(now, owner, after, limit);
        if (after != null) {
          secondPageRead.countDown();
        }
        return page;
      }
    };
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(2)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    int n = 250;
    enqueueOrders(h, n);
    ConcurrentMap<IdempotencyKey, Integer> sends = new ConcurrentHashMap<>();
    AtomicInteger waitedForRead = new AtomicInteger();
    Transport transport = (request, key) -> {
      sends.merge(key, 1, Integer::sum);
      if (sendsStarted.incrementAndGet() == 1) {
        // The first lane stays on its first operation until the second page is read: the other
        // lane alone resumes the rest of the first page meanwhile.
        try {
          if (secondPageRead.await(10, TimeUnit.SECONDS)) {
            waitedForRead.incrementAndGet();
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return ScriptedTransport.response(201);
    };

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order", ResumeHandler.of(transport, o -> { },
        f -> { throw new AssertionError(f); })));

    assertEquals(n, summary.succeeded(), summary.toString());
    assertEquals(n, sends.size());
    assertTrue(sends.values().stream().allMatch(c -> c == 1), "each pending operation sent exactly once");
    assertEquals(1, waitedForRead.get(), "the second page was read while the first was in flight");
    assertTrue(sendsStartedAtRead.size() >= 3, "pages read: " + sendsStartedAtRead);
    assertTrue(sendsStartedAtRead.get(1) < 100,
        "the second page is read before the first is all handed out; sends started at each read: "
            + sendsStartedAtRead);
  }

  @Test
  void aFailedPageReadStopsTheConcurrentPassAndLeavesTheRestPending() throws Exception {
    AtomicInteger reads = new AtomicInteger();
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
          throws IdempotencyException {
        if (reads.incrementAndGet() == 2) {
          throw new JournalException("disk gone", null);
        }
        return super.findDue(now, owner, after, limit);
      }
    };
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(THREADS)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    int n = 250;
    enqueueOrders(h, n);
    ConcurrentMap<IdempotencyKey, Integer> sends = new ConcurrentHashMap<>();
    Transport transport = answering201Counting(sends);

    JournalException thrown = assertThrows(JournalException.class, () -> h.executor.resumePending(
        Map.of("create-order", ResumeHandler.of(transport, o -> { }, f -> { }))));

    assertEquals("disk gone", thrown.getMessage());
    assertTrue(sends.size() <= 100, "only the first page's operations were sent: " + sends.size());
    assertTrue(sends.values().stream().allMatch(c -> c == 1), "each sent at most once");
    assertEquals(n - sends.size(), h.executor.journal().count(OperationState.PENDING),
        "every operation not sent stays PENDING for the next resume");
  }

  /**
   * Why: the lanes held recorded deliveries until they had one per lane. A target that stopped
   * answering left every lane waiting on an attempt with the held deliveries unwritten, and an app
   * that ended then (SIGTERM's shutdown hook closes the journal) had those outcomes handed to its
   * handlers again after the restart (examples' {@code ResumeSigtermTest}, in child JVMs). Each
   * delivery is now written before its lane takes its next operation, with the others made
   * meanwhile, and all of them by the end of the pass.
   */
  @Test
  void noDeliveryIsHeldWhileEveryLaneWaitsForAnAnswer() throws Exception {
    AtomicInteger deliveryWrites = new AtomicInteger();
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public boolean recordOutcomeDelivered(OperationId id, Instant at) throws IdempotencyException {
        deliveryWrites.incrementAndGet();
        return super.recordOutcomeDelivered(id, at);
      }

      @Override
      public int recordOutcomesDelivered(List<OperationId> ids, Instant at) throws IdempotencyException {
        deliveryWrites.incrementAndGet();
        return super.recordOutcomesDelivered(ids, at);
      }
    };
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(THREADS)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    int answered = 2 * THREADS + 1; // not a multiple of the lanes: batches of one per lane leave one held
    int n = answered + THREADS;
    enqueueOrders(h, n);
    ConcurrentMap<IdempotencyKey, Integer> sends = new ConcurrentHashMap<>();
    AtomicInteger sent = new AtomicInteger();
    CountDownLatch everyLaneWaits = new CountDownLatch(THREADS);
    CountDownLatch answer = new CountDownLatch(1);
    Transport transport = (request, key) -> {
      sends.merge(key, 1, Integer::sum);
      if (sent.incrementAndGet() > answered) {
        everyLaneWaits.countDown();
        try {
          answer.await(); // the target stops answering
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new java.io.InterruptedIOException();
        }
      }
      return ScriptedTransport.response(201);
    };
    AtomicInteger told = new AtomicInteger();
    ExecutorService caller = Executors.newSingleThreadExecutor();
    try {
      Future<ResumeSummary> pass = caller.submit(() -> h.executor.resumePending(Map.of("create-order",
          ResumeHandler.of(transport, o -> told.incrementAndGet(), f -> { throw new AssertionError(f); }))));
      assertTrue(everyLaneWaits.await(10, TimeUnit.SECONDS), "every lane took an operation the target holds");

      assertEquals(answered, told.get(), "the handlers got every answered order");
      assertEquals(List.of(), journal.findUndelivered(null, 100),
          "an outcome handed over was held unwritten while every lane waited for an answer");

      answer.countDown();
      ResumeSummary summary = pass.get(10, TimeUnit.SECONDS);
      assertEquals(n, summary.succeeded(), summary.toString());
    } finally {
      answer.countDown();
      caller.shutdownNow();
    }
    assertEquals(n, told.get());
    assertTrue(deliveryWrites.get() <= n, "journal writes: " + deliveryWrites.get());
    assertEquals(List.of(), journal.findUndelivered(null, 10), "every delivery recorded when the pass returns");
    ResumeSummary again = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(transport, o -> told.incrementAndGet(), f -> told.incrementAndGet())));
    assertEquals(0, again.examined(), again.toString());
    assertEquals(n, told.get(), "no outcome handed twice");
    assertTrue(sends.values().stream().allMatch(c -> c == 1), "each sent once");
  }

  /**
   * The outcomes handed over before a journal failure are recorded as delivered when the journal
   * can still be written, so that the next resume does not hand them again.
   */
  @Test
  void deliveriesHandedOverBeforeAFailureAreRecordedAndNotHandedAgain() throws Exception {
    FailingClaims failing = new FailingClaims(30);
    Harness h = new Harness(failing, Harness.POLICY, b -> b.resumeConcurrency(THREADS)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    int n = 250;
    enqueueOrders(h, n);
    Transport transport = (request, key) -> ScriptedTransport.response(201);
    AtomicInteger told = new AtomicInteger();
    assertThrows(JournalException.class, () -> h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(transport, o -> told.incrementAndGet(), f -> { }))));
    int toldInFailedPass = told.get();
    assertTrue(toldInFailedPass > 0);

    ResumeSummary next = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(transport, o -> told.incrementAndGet(), f -> { throw new AssertionError(f); })));

    assertEquals(n - toldInFailedPass, next.examined(), "none of the outcomes told before is handed again: " + next);
    assertEquals(n, told.get());
  }

  /**
   * The lanes claim a batch before sending it, and an operation this executor is executing right
   * now is in the due pages (IN_FLIGHT under the executor's own live lease, which a claim may take
   * back). Each operation of a batch joins the executor's single flight before its claim, so the
   * running execution is joined, never claimed over and sent a second time.
   */
  @Test
  void anOperationExecutingInThisProcessIsJoinedNotClaimedByTheBatch() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.resumeConcurrency(THREADS)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    int n = 20;
    enqueueOrders(h, n);
    Operation running = Operation.builder("create-order", Requests.order("{\"running\":true}")).build();
    CountDownLatch onTheWire = new CountDownLatch(1);
    CountDownLatch answer = new CountDownLatch(1);
    ConcurrentMap<IdempotencyKey, Integer> sends = new ConcurrentHashMap<>();
    Transport inline = (request, key) -> {
      sends.merge(key, 1, Integer::sum);
      onTheWire.countDown();
      try {
        answer.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return ScriptedTransport.response(201);
    };
    AtomicReference<Throwable> inlineFailure = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      try {
        h.executor.execute(running, inline);
      } catch (Throwable e) {
        inlineFailure.set(e);
      }
    });
    caller.start();
    assertTrue(onTheWire.await(10, TimeUnit.SECONDS));
    Transport resumed = (request, key) -> {
      sends.merge(key, 1, Integer::sum);
      if (sends.size() == n + 1) {
        answer.countDown();  // every other operation is out: the inline call may end now
      }
      return ScriptedTransport.response(201);
    };
    List<Outcome> told = Collections.synchronizedList(new ArrayList<>());

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order", ResumeHandler.of(resumed, told::add,
        f -> { throw new AssertionError(f); })));
    caller.join(10_000);

    assertEquals(null, inlineFailure.get());
    assertEquals(n + 1, summary.succeeded(), summary.toString());
    assertEquals(n + 1, sends.size());
    assertTrue(sends.values().stream().allMatch(c -> c == 1), "each sent once: " + sends.values());
    assertTrue(told.stream().anyMatch(o -> o.key().equals(running.key())), "the running one's outcome, joined");
  }

  /**
   * A lane that takes its batch's claim late (here: the lease expired right after the batch was
   * claimed, and another owner took one of the operations over) does not send under it: it gives
   * the claim back and claims afresh, so the operation another owner holds is not sent.
   */
  @Test
  void aClaimTakenLateIsGivenBackAndClaimedAfreshNotSentUnderItsOldLease() throws Exception {
    AtomicReference<Harness> harness = new AtomicReference<>();
    AtomicReference<OperationId> takenOver = new AtomicReference<>();
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now,
          Duration leaseFor) throws IdempotencyException {
        List<Optional<Lease>> leases = super.claimAll(asRead, owner, now, leaseFor);
        if (takenOver.compareAndSet(null, asRead.get(0).id())) {
          harness.get().time.jump(leaseFor.plusSeconds(1));
          claim(asRead.get(0).id(), "other", harness.get().time.now(), leaseFor).orElseThrow();
        }
        return leases;
      }
    };
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(THREADS)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    harness.set(h);
    int n = 12;
    enqueueOrders(h, n);
    ConcurrentMap<IdempotencyKey, Integer> sends = new ConcurrentHashMap<>();
    Transport transport = answering201Counting(sends);

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order", ResumeHandler.of(transport, o -> { },
        f -> { })));

    assertEquals(null, sends.get(takenOver.get().key()), "sent while another owner held it");
    assertEquals(n - 1, sends.size());
    assertTrue(sends.values().stream().allMatch(c -> c == 1), "each sent once");
    assertEquals(n - 1, summary.succeeded(), summary.toString());
    // Still held by the other owner as the pass ends: counted there, and examined once.
    assertEquals(new ResumeSummary(n, n - 1, 0, 0, 0, 0, 0, 1), summary);
    OperationRecord other = journal.find(takenOver.get()).orElseThrow();
    assertEquals("other", other.owner());
    assertEquals(OperationState.IN_FLIGHT, other.state());
  }

  /**
   * Why: a batch was cut at the end of each page of due operations, so 100 operations with 8 lanes
   * were claimed as 12 batches of 8 and one of 4, and each batch is a commit and, on a durable
   * journal, a disk sync (P4: 2,401 claims for 60,000 operations instead of 1,875). A batch now
   * goes on into the next page; only the last of the pass is short. Counted, not timed.
   */
  @Test
  void aBatchGoesOnIntoTheNextPageAndOnlyThePassesLastIsShort() throws Exception {
    List<Integer> batchSizes = Collections.synchronizedList(new ArrayList<>());
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now,
          Duration leaseFor) throws IdempotencyException {
        batchSizes.add(asRead.size());
        return super.claimAll(asRead, owner, now, leaseFor);
      }
    };
    int lanes = 8;
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(lanes)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    int n = 250;  // pages of 100, 100 and 50; 31 batches of 8 and one of 2
    enqueueOrders(h, n);
    resumeEachSentOnce(h, n);
    List<Integer> expected = new ArrayList<>(Collections.nCopies(n / lanes, lanes));
    expected.add(n % lanes);
    assertEquals(expected, batchSizes);
  }

  /**
   * Why: the lane that claimed the next batch also read the next page when it was due, and while
   * it read (which on a durable journal waits for the commit of the claims before it) no batch was
   * claimed, and the lanes that had sent theirs waited (P4: 3 s of a 25 s resume). Now a lane
   * about to take its next operation reads the page, and the next batch is claimed meanwhile.
   * Failed before: no batch was claimed while the page read was held (the read waits up to 10 s).
   */
  @Test
  void theNextPageIsReadByALaneWhileAnotherClaimsTheNextBatch() throws Exception {
    CountDownLatch claimedDuringRead = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicBoolean readingAhead = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.atomic.AtomicBoolean heldOnce = new java.util.concurrent.atomic.AtomicBoolean();
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
          throws IdempotencyException {
        if (after != null && heldOnce.compareAndSet(false, true)) {
          readingAhead.set(true);
          try {
            claimedDuringRead.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            readingAhead.set(false);
          }
        }
        return super.findDue(now, owner, after, limit);
      }

      @Override
      public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now,
          Duration leaseFor) throws IdempotencyException {
        if (readingAhead.get()) {
          claimedDuringRead.countDown();
        }
        return super.claimAll(asRead, owner, now, leaseFor);
      }
    };
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(2)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    int n = 250;
    enqueueOrders(h, n);
    resumeEachSentOnce(h, n);
    assertEquals(0, claimedDuringRead.getCount(), "no batch was claimed while the next page was read");
  }

  /** Resumes the {@code n} journaled orders against a server that answers 201: each succeeds, sent once. */
  private static void resumeEachSentOnce(Harness h, int n) throws IdempotencyException {
    ConcurrentMap<IdempotencyKey, Integer> sends = new ConcurrentHashMap<>();
    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(answering201Counting(sends), o -> { }, f -> { throw new AssertionError(f); })));
    assertEquals(n, summary.succeeded(), summary.toString());
    assertEquals(n, sends.size());
    assertTrue(sends.values().stream().allMatch(c -> c == 1), "each sent once");
  }

  /** Journals {@code n} create-order operations, each with a body of its own, without sending them. */
  private static void enqueueOrders(Harness h, int n) throws IdempotencyException {
    for (int i = 0; i < n; i++) {
      h.executor.enqueue(Operation.builder("create-order", Requests.order("{\"n\":" + i + "}")).build());
    }
  }

  /** A transport that answers 201 and counts, in {@code sends}, the requests sent under each key. */
  private static Transport answering201Counting(ConcurrentMap<IdempotencyKey, Integer> sends) {
    return (request, key) -> {
      sends.merge(key, 1, Integer::sum);
      return ScriptedTransport.response(201);
    };
  }

  @Test
  void concurrencyOutOfRangeIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> IdempotentExecutor.builder().resumeConcurrency(0));
    assertThrows(IllegalArgumentException.class, () -> IdempotentExecutor.builder().resumeConcurrency(257));
  }

  /**
   * A journal whose {@code failAt}-th claim fails. A lane that claims after the failure waits until
   * the failed lane has ended (it stops the pass on its way out): otherwise, on a loaded machine,
   * the failed lane could be descheduled while the others resumed everything, and a bound on the
   * claims after the failure would measure the scheduler instead of the stop.
   */
  private static final class FailingClaims extends ForwardingJournal {
    final AtomicInteger claims = new AtomicInteger();
    private final AtomicReference<Thread> failedLane = new AtomicReference<>();
    private final int failAt;

    FailingClaims(int failAt) {
      super(new InMemoryJournal());
      this.failAt = failAt;
    }

    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      if (claims.incrementAndGet() == failAt) {
        failedLane.set(Thread.currentThread());
        throw new JournalException("disk gone", null);
      }
      Thread failed = failedLane.get();
      if (failed != null) {
        try {
          failed.join(10_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return super.claim(id, owner, now, leaseFor);
    }
  }
}
