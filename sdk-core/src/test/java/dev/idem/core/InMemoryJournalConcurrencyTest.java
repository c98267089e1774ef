package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.StaleOwnerException;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link InMemoryJournal} without a global lock must still be atomic per operation: of many threads
 * that claim one operation at once, exactly one gets the lease; of many that finish it with the
 * leases they saw, only the holder's write lands, and a terminal state never reverts; purging and
 * beginning the same identity concurrently leaves it findable and pageable, never half there; of
 * many that re-drive one operation as they read it, exactly one does.
 */
class InMemoryJournalConcurrencyTest {
  private static final Instant T0 = Instant.parse("2026-11-02T10:00:00Z");
  private static final int THREADS = 8;
  private final InMemoryJournal journal = new InMemoryJournal();
  private final ExecutorService pool = Executors.newFixedThreadPool(THREADS);

  @AfterEach
  void stop() throws InterruptedException {
    pool.shutdownNow();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
  }

  private static NewOperation op(String key) {
    RequestSnapshot req = Requests.order("{\"k\":\"" + key + "\"}");
    return new NewOperation(new OperationId("tenant", "create-order", IdempotencyKey.of(key)), null,
        Fingerprinter.defaults().fingerprint(req), req, T0);
  }

  private <T> List<T> race(Callable<T> task) throws Exception {
    CyclicBarrier start = new CyclicBarrier(THREADS);
    List<Future<T>> futures = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      futures.add(pool.submit(() -> {
        start.await(10, TimeUnit.SECONDS);
        return task.call();
      }));
    }
    List<T> results = new ArrayList<>();
    for (Future<T> f : futures) {
      results.add(f.get(10, TimeUnit.SECONDS));
    }
    return results;
  }

  @Test
  void exactlyOneConcurrentBeginCreatesAndExactlyOneClaimWins() throws Exception {
    for (int round = 0; round < 200; round++) {
      NewOperation op = op("k" + round);
      AtomicInteger created = new AtomicInteger();
      race(() -> journal.begin(op).created() ? created.incrementAndGet() : 0);
      assertEquals(1, created.get(), "round " + round);
      AtomicInteger owner = new AtomicInteger();
      List<Optional<Lease>> leases = race(() -> journal.claim(op.id(), "p" + owner.incrementAndGet(), T0,
          Duration.ofMinutes(1)));
      assertEquals(1, leases.stream().filter(Optional::isPresent).count(), "round " + round);
      Lease winner = leases.stream().flatMap(Optional::stream).findFirst().orElseThrow();
      assertEquals(1, winner.generation());
      // Everyone now tries to finish it: a stale lease (made up from the winner's with another owner)
      // or the winner's. Only the first write with the winner's lease lands.
      AtomicInteger turn = new AtomicInteger();
      List<Boolean> landed = race(() -> {
        Lease lease = turn.incrementAndGet() % 2 == 0 ? winner
            : new Lease("intruder", winner.generation(), winner.expiresAt(), false);
        try {
          journal.transition(op.id(), lease, Transition.finish(OperationState.SUCCEEDED, T0,
              ScriptedTransport.response(201), null));
          return true;
        } catch (StaleOwnerException e) {
          return false;
        }
      });
      assertEquals(1, landed.stream().filter(b -> b).count(), "round " + round);
      OperationRecord r = journal.find(op.id()).orElseThrow();
      assertEquals(OperationState.SUCCEEDED, r.state());
      assertTrue(journal.claim(op.id(), "late", T0.plusSeconds(3600), Duration.ofMinutes(1)).isEmpty());
      assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    }
  }

  @Test
  void concurrentAttemptRecordsOnDifferentOperationsAreAllKept() throws Exception {
    int perThread = 300;
    AtomicInteger next = new AtomicInteger();
    race(() -> {
      for (int i = 0; i < perThread; i++) {
        NewOperation op = op("op" + next.incrementAndGet());
        journal.begin(op);
        Lease lease = journal.claim(op.id(), "p", T0, Duration.ofMinutes(1)).orElseThrow();
        for (int a = 1; a <= 3; a++) {
          journal.recordAttempt(op.id(), lease, new AttemptRecord(a, lease.generation(), T0, T0,
              Classification.TRANSIENT, 503, null, "HTTP 503", Duration.ZERO, "test"));
        }
        journal.transition(op.id(), lease, Transition.retryAt(T0, T0, "503"));
      }
      return null;
    });
    int seen = 0;
    OperationId after = null;
    while (true) {
      List<OperationRecord> page = journal.findDue(T0, after, 97);
      if (page.isEmpty()) {
        break;
      }
      for (OperationRecord r : page) {
        assertEquals(3, r.attempts().size(), r.id().toString());
        assertEquals(OperationState.PENDING, r.state());
      }
      seen += page.size();
      after = page.get(page.size() - 1).id();
    }
    assertEquals(THREADS * perThread, seen);
  }

  @Test
  void purgeRacingBeginOfTheSameIdentityLeavesItWholeOrGone() throws Exception {
    for (int round = 0; round < 200; round++) {
      NewOperation op = op("p" + round);
      journal.begin(op);
      Lease lease = journal.claim(op.id(), "p", T0, Duration.ofMinutes(1)).orElseThrow();
      journal.transition(op.id(), lease, Transition.finish(OperationState.FAILED, T0, null, "no"));
      AtomicInteger turn = new AtomicInteger();
      race(() -> turn.incrementAndGet() % 2 == 0 ? journal.purge(T0.plusSeconds(1)) : journal.begin(op).created());
      Optional<OperationRecord> found = journal.find(op.id());
      boolean paged = journal.findByState(found.map(OperationRecord::state).orElse(OperationState.PENDING), null,
          10_000).stream().anyMatch(r -> r.id().equals(op.id()));
      // Either gone everywhere, or present in find and in the ordered pages alike.
      assertEquals(found.isPresent(), paged, "round " + round);
    }
  }

  @Test
  void ofManyRedrivesOfOneOperationAsReadExactlyOneLands() throws Exception {
    for (int round = 0; round < 200; round++) {
      NewOperation op = op("r" + round);
      journal.begin(op);
      Lease lease = journal.claim(op.id(), "p0", T0, Duration.ofMinutes(1)).orElseThrow();
      OperationRecord asRead = journal.transition(op.id(), lease,
          Transition.finish(OperationState.UNCERTAIN, T0, null, "timeout"));
      List<Optional<OperationRecord>> redriven = race(() -> journal.redriveIfUnchanged(asRead, T0.plusSeconds(1)));
      assertEquals(1, redriven.stream().filter(Optional::isPresent).count(), "round " + round);
      assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state(), "round " + round);
    }
  }
}
