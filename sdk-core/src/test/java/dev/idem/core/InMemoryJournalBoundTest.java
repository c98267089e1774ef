package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * {@link InMemoryJournal} keeps a bounded size of finished operations. Before the bound, a process
 * on the default journal that never purged (nothing purges it by itself) kept every operation it
 * ran, about 1.4 KB each (0.7 KB packed), until it ran out of memory.
 */
class InMemoryJournalBoundTest {
  private static final Instant T0 = Instant.parse("2026-11-02T10:00:00Z");
  private static final String KILOBYTE = "x".repeat(1_000);

  private static NewOperation op(String key, boolean queued) {
    RequestSnapshot req = Requests.order("{\"k\":\"" + key + "\"}");
    return new NewOperation(new OperationId("tenant", "create-order", IdempotencyKey.of(key)), null,
        Fingerprinter.defaults().fingerprint(req), req, T0, queued);
  }

  /** Runs operation {@code key} to SUCCEEDED with one attempt and a response of {@code body}. */
  private static OperationRecord finish(InMemoryJournal journal, String key, String body) throws Exception {
    return finish(journal, key, body, OperationState.SUCCEEDED);
  }

  private static OperationRecord finish(InMemoryJournal journal, String key, String body, OperationState end)
      throws Exception {
    BeginResult begun = journal.beginAndClaim(op(key, false), "p1", Duration.ofMinutes(1));
    journal.recordAttemptAndTransition(begun.record().id(), begun.lease(), attempt(begun.lease()),
        Transition.finish(end, T0, ScriptedTransport.response(201, Map.of(), body), null));
    return journal.find(begun.record().id()).orElse(null);
  }

  private static AttemptRecord attempt(Lease lease) {
    return new AttemptRecord(1, lease.generation(), T0, T0, Classification.SUCCESS, 201, null, "HTTP 201",
        Duration.ZERO, "test");
  }

  private static OperationId id(String key) {
    return op(key, false).id();
  }

  private static List<OperationRecord> all(InMemoryJournal journal, OperationState state) throws Exception {
    List<OperationRecord> found = new ArrayList<>();
    OperationId after = null;
    while (true) {
      List<OperationRecord> page = journal.findByState(state, after, 500);
      if (page.isEmpty()) {
        return found; // only an empty page is the last
      }
      found.addAll(page);
      after = page.get(page.size() - 1).id();
    }
  }

  @Test
  void theDefaultJournalKeepsAboutSixteenMebibytesOfFinishedOperationsAndDropsTheFirstFinished()
      throws Exception {
    InMemoryJournal journal = new InMemoryJournal();
    int total = 30_000;
    long weight = 0;
    for (int i = 0; i < total; i++) {
      OperationRecord r = finish(journal, String.format("k%06d", i), KILOBYTE);
      if (r != null) {
        weight = InMemoryJournal.weight(r);
      }
    }
    assertTrue(weight > 1_400 && weight < 1_800, "a finished keyed POST with 1 KB of body weighs " + weight);

    int kept = all(journal, OperationState.SUCCEEDED).size();
    assertEquals(InMemoryJournal.DEFAULT_MAX_FINISHED_BYTES / weight, kept,
        "as many as fit in 16 MiB, estimated (30,000 would be about 48 MB)");
    for (int i = 0; i < total; i++) {
      boolean present = journal.find(id(String.format("k%06d", i))).isPresent();
      assertEquals(i >= total - kept, present, "the first to finish are dropped first: operation " + i);
    }
  }

  @Test
  void aFinishedOperationsHeadersCountAgainstTheBound() throws Exception {
    // An API that answers with large headers (a long trace or policy header) holds them for every
    // kept operation: the bound must count them, or the journal keeps many times its bound.
    String big = "h".repeat(8_000);
    InMemoryJournal journal = new InMemoryJournal(20_000);
    OperationRecord last = null;
    for (int i = 0; i < 10; i++) {
      BeginResult begun = journal.beginAndClaim(op("big-" + i, false), "p1", Duration.ofMinutes(1));
      journal.recordAttemptAndTransition(begun.record().id(), begun.lease(), attempt(begun.lease()),
          Transition.finish(OperationState.SUCCEEDED, T0, ScriptedTransport.response(201, Map.of("x-trace", big), ""),
              null));
      last = journal.find(begun.record().id()).orElse(last);
    }
    assertTrue(InMemoryJournal.weight(last) > 8_000, "weighs " + InMemoryJournal.weight(last));
    assertTrue(all(journal, OperationState.SUCCEEDED).size() <= 2,
        "20,000 bytes hold two operations of 8 KB of headers, not " + all(journal, OperationState.SUCCEEDED).size());
  }

  /** Runs to SUCCEEDED an operation of key {@code key} whose request does not hold the key. */
  private static OperationRecord finishSameRequest(String key) throws Exception {
    InMemoryJournal journal = new InMemoryJournal();
    RequestSnapshot req = Requests.order("{}");
    NewOperation op = new NewOperation(new OperationId("tenant", "create-order", IdempotencyKey.of(key)), null,
        Fingerprinter.defaults().fingerprint(req), req, T0, false);
    BeginResult begun = journal.beginAndClaim(op, "p1", Duration.ofMinutes(1));
    journal.recordAttemptAndTransition(op.id(), begun.lease(), attempt(begun.lease()),
        Transition.finish(OperationState.SUCCEEDED, T0, ScriptedTransport.response(201), null));
    return journal.find(op.id()).orElseThrow();
  }

  @Test
  void aLongKeyCountsAgainstTheBound() throws Exception {
    // The key lives outside the packed record: an app's long keys (a business reference, a tenant
    // prefix) are held for every kept operation too.
    long shortOne = InMemoryJournal.weight(finishSameRequest("k1"));
    long longOne = InMemoryJournal.weight(finishSameRequest("k".repeat(200)));
    assertTrue(longOne - shortOne >= 198, "a 200-character key weighs " + (longOne - shortOne) + " bytes more than a"
        + " 2-character one");
  }

  @Test
  void operationsInProgressAndOutcomesStillOwedToAHandlerAreNeverDropped() throws Exception {
    InMemoryJournal journal = new InMemoryJournal(0);
    NewOperation pending = op("pending", false);
    journal.begin(pending);
    BeginResult inFlight = journal.beginAndClaim(op("in-flight", false), "p1", Duration.ofMinutes(1));
    NewOperation queued = op("queued", true);
    journal.begin(queued);
    Lease lease = journal.claim(queued.id(), "p1", T0, Duration.ofMinutes(1)).orElseThrow();
    journal.recordAttemptAndTransition(queued.id(), lease, attempt(lease),
        Transition.finish(OperationState.SUCCEEDED, T0, ScriptedTransport.response(201), null));

    // Enough that the identities waiting for a listing are trimmed past the three kept ones.
    for (int i = 0; i < 10_000; i++) {
      finish(journal, "done-" + i, "");
    }

    assertEquals(OperationState.PENDING, journal.find(pending.id()).orElseThrow().state());
    assertEquals(List.of(pending.id()), journal.findByState(OperationState.PENDING, null, 10).stream()
        .map(OperationRecord::id).toList(), "still listed");
    assertEquals(List.of(inFlight.record().id()), journal.findByState(OperationState.IN_FLIGHT, null, 10).stream()
        .map(OperationRecord::id).toList(), "still listed");
    assertEquals(OperationState.IN_FLIGHT, journal.find(inFlight.record().id()).orElseThrow().state());
    assertTrue(journal.find(queued.id()).orElseThrow().outcomeUndelivered(), "its handler has not had it");
    assertEquals(List.of(queued.id()), all(journal, OperationState.SUCCEEDED).stream().map(OperationRecord::id)
        .toList(), "of the finished, only the one whose outcome is owed");
    assertEquals(1, journal.findUndelivered(null, 10).size());

    assertTrue(journal.recordOutcomeDelivered(queued.id(), T0));
    assertTrue(journal.find(queued.id()).isEmpty(), "delivered, it may go");
    assertEquals(List.of(), all(journal, OperationState.SUCCEEDED));
  }

  @Test
  void aDroppedOperationIsForgottenAsAfterAPurgeAndBegunAgainUnderTheSameKey() throws Exception {
    InMemoryJournal journal = new InMemoryJournal(0);
    assertEquals(null, finish(journal, "k1", "{}"), "dropped as it finished");

    assertTrue(journal.find(id("k1")).isEmpty());
    assertEquals(List.of(), journal.findByState(OperationState.SUCCEEDED, null, 10));
    assertThrows(IllegalStateException.class, () -> journal.redrive(id("k1"), T0));
    BeginResult again = journal.begin(op("k1", false));
    assertTrue(again.created(), "begun anew, to be sent with the same key");
    assertEquals(List.of(id("k1")), journal.findByState(OperationState.PENDING, null, 10).stream()
        .map(OperationRecord::id).toList(), "listed once");
  }

  @Test
  void aPurgedOrReDrivenOperationNoLongerCountsAgainstTheBound() throws Exception {
    long one = InMemoryJournal.weight(finish(new InMemoryJournal(), "probe", ""));
    InMemoryJournal journal = new InMemoryJournal(3 * one);
    finish(journal, "a", "");
    finish(journal, "b", "");
    finish(journal, "c", "");
    assertEquals(3, journal.purge(T0.plusSeconds(1)));
    finish(journal, "d", "", OperationState.UNCERTAIN);
    finish(journal, "e", "");
    finish(journal, "f", "");
    assertEquals(2, all(journal, OperationState.SUCCEEDED).size(), "the purged three no longer count");
    assertTrue(journal.find(id("d")).isPresent());

    journal.redrive(id("d"), T0);
    finish(journal, "g", "");
    assertEquals(OperationState.PENDING, journal.find(id("d")).orElseThrow().state(), "re-driven: work again");
    assertEquals(Set.of(id("e"), id("f"), id("g")), ids(all(journal, OperationState.SUCCEEDED)));
  }

  @Test
  void listingsShowEachKeptOperationOnceWhileOtherThreadsFinishAndDrop() throws Exception {
    int threads = 8;
    int each = 1_500;
    long one = InMemoryJournal.weight(finish(new InMemoryJournal(), "probe", ""));
    InMemoryJournal journal = new InMemoryJournal(50 * one);
    ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
    AtomicBoolean done = new AtomicBoolean();
    try {
      CyclicBarrier start = new CyclicBarrier(threads + 1);
      List<Future<?>> writers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        writers.add(pool.submit(() -> {
          start.await(10, TimeUnit.SECONDS);
          for (int i = 0; i < each; i++) {
            finish(journal, "t" + thread + "-" + i, "");
          }
          return null;
        }));
      }
      Future<Integer> lister = pool.submit(() -> {
        start.await(10, TimeUnit.SECONDS);
        int listings = 0;
        while (!done.get()) {
          List<OperationRecord> listed = all(journal, OperationState.SUCCEEDED);
          assertEquals(listed.size(), ids(listed).size(), "no operation twice in one listing");
          listings++;
        }
        return listings;
      });
      for (Future<?> w : writers) {
        w.get(60, TimeUnit.SECONDS);
      }
      done.set(true);
      assertTrue(lister.get(60, TimeUnit.SECONDS) > 0);
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    // Two callers may each see the bound passed and each drop one, so a few fewer may be left.
    List<OperationRecord> kept = all(journal, OperationState.SUCCEEDED);
    assertTrue(kept.size() <= 50 && kept.size() >= 50 - threads, "the bound holds: " + kept.size());
    int findable = 0;
    for (int t = 0; t < threads; t++) {
      for (int i = 0; i < each; i++) {
        findable += journal.find(id("t" + t + "-" + i)).isPresent() ? 1 : 0;
      }
    }
    assertEquals(kept.size(), findable, "what is listed is what is kept");
    assertFalse(journal.find(id("t0-0")).isPresent());
  }

  @Test
  void aCallWhoseFinishedOperationWasDroppedGoesOutAgainWithItsKeyAndTheServerRecognisesIt() throws Exception {
    VirtualTime time = new VirtualTime();
    FakeHost server = new FakeHost(time, FakeHost.always(201));
    InMemoryJournal journal = new InMemoryJournal(0);
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5).build();
    Operation order = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();

    Outcome first = idem.execute(order, server);
    assertEquals(201, first.response().status(), "the caller is told the outcome before it is dropped");
    assertTrue(journal.find(order.id()).isEmpty(), "dropped once finished, with a bound of 0");

    Outcome again = idem.execute(order, server);
    assertEquals(first.key(), again.key());
    assertEquals(2, server.attempts(order.id().key()), "sent again, with the same key");
    assertEquals(1, server.effects(), "one effect on the server");
    assertTrue(again.replayed(), "the server answered from its own record of the key");
  }

  @Test
  void theBoundMustNotBeNegative() {
    assertThrows(IllegalArgumentException.class, () -> new InMemoryJournal(-1));
  }

  private static Set<OperationId> ids(List<OperationRecord> records) {
    Set<OperationId> ids = new HashSet<>();
    records.forEach(r -> ids.add(r.id()));
    return ids;
  }
}
