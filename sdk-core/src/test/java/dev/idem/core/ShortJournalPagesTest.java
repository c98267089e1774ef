package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.resume.Reconciliation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.JournalOps;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * A journal may return fewer records than the page size asked for while more follow (the JDBC
 * journal cuts a page at about 4 Mi characters of stored text, so that a page of large bodies is
 * bounded by bytes): only an empty page is the last. Every caller that pages must read on to the
 * empty page. Here a journal that answers every paged read with one record, however many are
 * asked for: a caller that took a short page for the last handled one operation and left the rest.
 */
class ShortJournalPagesTest {
  /** Answers every paged read with its first record only, as a journal that cut the page short. */
  private static final class OneRecordPages extends ForwardingJournal {
    OneRecordPages(Journal delegate) {
      super(delegate);
    }

    private static List<OperationRecord> first(List<OperationRecord> page) {
      return page.isEmpty() ? page : List.of(page.get(0));
    }

    @Override
    public List<OperationRecord> findDue(Instant now, OperationId after, int limit) throws IdempotencyException {
      return first(super.findDue(now, after, limit));
    }

    @Override
    public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
        throws IdempotencyException {
      return first(super.findDue(now, owner, after, limit));
    }

    @Override
    public List<OperationRecord> findByState(OperationState state, OperationId after, int limit)
        throws IdempotencyException {
      return first(super.findByState(state, after, limit));
    }

    @Override
    public List<OperationRecord> findUndelivered(OperationId after, int limit) throws IdempotencyException {
      return first(super.findUndelivered(after, limit));
    }
  }

  /**
   * A journal that implements only what a journal must, over {@code pages}: Journal's own defaults
   * answer {@code findDue} by owner, {@code count} and {@code oldestCreatedAt} from its short pages.
   */
  private static Journal withJournalDefaults(Journal pages) {
    InvocationHandler h = (proxy, m, args) -> {
      if (usesDefault(m)) {
        return InvocationHandler.invokeDefault(proxy, m, args);
      }
      try {
        return m.invoke(pages, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    };
    return (Journal) Proxy.newProxyInstance(Journal.class.getClassLoader(), new Class<?>[] {Journal.class}, h);
  }

  private static boolean usesDefault(Method m) {
    return switch (m.getName()) {
      case "count", "oldestCreatedAt" -> true;
      case "findDue" -> m.getParameterTypes()[1] == String.class;
      default -> false;
    };
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  /** Sends each key once, answering 201; records the keys sent. */
  private static Transport recording(List<IdempotencyKey> sent) {
    return (request, key) -> {
      sent.add(key);
      return ScriptedTransport.response(201);
    };
  }

  @ParameterizedTest(name = "resumeConcurrency {0}")
  @ValueSource(ints = {1, 4})
  void resumePendingResumesEveryDueOperationOnce(int concurrency) throws Exception {
    InMemoryJournal stored = new InMemoryJournal();
    Harness h = new Harness(new OneRecordPages(stored), Harness.POLICY, b -> b.resumeConcurrency(concurrency));
    List<Operation> ops = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      ops.add(order(i));
      h.executor.enqueue(ops.get(i));
      h.time.advance(Duration.ofSeconds(1));
    }
    // An earlier incarnation's own lease: the first part of findDue by owner, paged too.
    stored.claim(ops.get(3).id(), Harness.OWNER, h.time.now(), Duration.ofMinutes(2)).orElseThrow();
    stored.claim(ops.get(5).id(), Harness.OWNER, h.time.now(), Duration.ofMinutes(2)).orElseThrow();
    List<IdempotencyKey> sent = Collections.synchronizedList(new ArrayList<>());

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(recording(sent), o -> { }, f -> { throw new AssertionError(f); })));

    assertEquals(7, sent.size(), "every due operation sent: " + sent);
    for (Operation op : ops) {
      assertEquals(1, Collections.frequency(sent, op.key()), "once, with its key: " + op.key());
      OperationRecord r = stored.find(op.id()).orElseThrow();
      assertEquals(OperationState.SUCCEEDED, r.state());
      // A lease taken back also records the attempt the dead holder may have sent (Takeover).
      int expected = op == ops.get(3) || op == ops.get(5) ? 2 : 1;
      assertEquals(expected, r.attempts().size(), "attempts of " + op.key());
    }
    assertEquals(7, summary.examined(), summary.toString());
    assertEquals(7, summary.succeeded(), summary.toString());
  }

  @Test
  void resumePendingHandsOverEveryOwedOutcomeAndCountsEveryLeaseHeldElsewhere() throws Exception {
    InMemoryJournal stored = new InMemoryJournal();
    Harness h = new Harness(new OneRecordPages(stored), Harness.POLICY, b -> { });
    List<Operation> owed = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      owed.add(order(i));
      JournalOps.endedOwed(stored, h.time, "pod-gone", owed.get(i));
    }
    List<Operation> held = new ArrayList<>();
    for (int i = 10; i < 13; i++) {
      held.add(order(i));
      h.executor.enqueue(held.get(held.size() - 1));
      stored.claim(held.get(held.size() - 1).id(), "pod-live", h.time.now(), Duration.ofMinutes(2)).orElseThrow();
    }
    List<OperationId> told = Collections.synchronizedList(new ArrayList<>());
    List<IdempotencyKey> sent = Collections.synchronizedList(new ArrayList<>());

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(recording(sent), o -> told.add(o.operationId()), f -> { throw new AssertionError(f); })));

    assertEquals(owed.stream().map(Operation::id).sorted(ORDER).toList(), told.stream().sorted(ORDER).toList(),
        "each owed outcome handed once");
    for (Operation op : owed) {
      assertTrue(!stored.find(op.id()).orElseThrow().outcomeUndelivered(), "its delivery recorded");
    }
    assertEquals(List.of(), sent, "nothing sent: the owed ones ended, the others are held elsewhere");
    assertEquals(3, summary.leasedElsewhere(), summary.toString());
    assertEquals(6, summary.examined(), summary.toString());
  }

  private static final java.util.Comparator<OperationId> ORDER = java.util.Comparator.comparing(OperationId::toString);

  @Test
  void reconcileUncertainAsksAboutEveryUncertainOperation() throws Exception {
    InMemoryJournal stored = new InMemoryJournal();
    Harness h = new Harness(new OneRecordPages(stored), Harness.POLICY, b -> { });
    List<OperationId> uncertain = new ArrayList<>();
    for (String key : List.of("u-1", "u-2", "u-3", "u-4")) {
      uncertain.add(JournalOps.finish(stored, key, OperationState.UNCERTAIN).id());
    }
    List<OperationId> asked = new ArrayList<>();

    int settled = h.executor.reconcileUncertain(record -> {
      asked.add(record.id());
      return Reconciliation.failed("not found");
    });

    assertEquals(4, settled);
    assertEquals(uncertain.stream().sorted(ORDER).toList(), asked.stream().sorted(ORDER).toList(), "each asked once");
    for (OperationId id : uncertain) {
      assertEquals(OperationState.FAILED, stored.find(id).orElseThrow().state());
    }
  }

  @Test
  void anOutboxPollStartsEveryDueOperationUpToItsCapacity() throws Exception {
    InMemoryJournal stored = new InMemoryJournal();
    Harness h = new Harness(new OneRecordPages(stored), Harness.POLICY, b -> { });
    List<Operation> ops = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      ops.add(order(i));
      h.executor.enqueue(ops.get(i));
    }
    // Each attempt stays on the wire until answered below, so that no delivery's end wakes the
    // poller: what one poll started is what its read of the journal found.
    Map<IdempotencyKey, CompletableFuture<ResponseSnapshot>> onTheWire = new ConcurrentHashMap<>();
    List<IdempotencyKey> sent = Collections.synchronizedList(new ArrayList<>());
    AsyncTransport held = (request, key) -> {
      sent.add(key);
      return onTheWire.computeIfAbsent(key, k -> new CompletableFuture<>());
    };
    List<OperationId> told = Collections.synchronizedList(new ArrayList<>());
    OutboxDispatcher outbox = OutboxDispatcher.builder(h.executor).clock(h.time.clock())
        .scheduler(h.time.scheduler()).pollInterval(Duration.ofSeconds(1))
        .registerAsync("create-order", held, o -> told.add(o.operationId()), f -> { throw new AssertionError(f); })
        .build().start();
    try {
      h.time.advance(Duration.ofMillis(500));  // the first poll, not the second

      assertEquals(ops.stream().map(op -> op.key().value()).sorted().toList(),
          sent.stream().map(IdempotencyKey::value).sorted().toList(),
          "the first poll starts every due operation (capacity 32), each once, not one per poll");
      onTheWire.values().forEach(f -> f.complete(ScriptedTransport.response(201)));
      h.time.advance(Duration.ofSeconds(5));
      for (Operation op : ops) {
        OperationRecord r = stored.find(op.id()).orElseThrow();
        assertEquals(OperationState.SUCCEEDED, r.state(), op.key().toString());
        assertEquals(1, r.attempts().size(), "one attempt: " + op.key());
      }
      assertEquals(5, sent.size(), "nothing sent twice: " + sent);
      assertEquals(5, told.size(), "each outcome told once: " + told);
    } finally {
      outbox.close();
    }
  }

  @Test
  void anOutboxDrainWaitsForAPendingOperationPastAShortPage() throws Exception {
    InMemoryJournal stored = new InMemoryJournal();
    Harness h = new Harness(new OneRecordPages(stored), Harness.POLICY, b -> { });
    // First by identity: a name this dispatcher does not deliver ("a-..." sorts before "create-...").
    h.executor.enqueue(Operation.builder("a-report", Requests.order("{}")).build());
    // Then one it delivers, PENDING with its retry an hour away.
    Operation later = order(1);
    h.executor.enqueue(later);
    Lease lease = stored.claim(later.id(), "pod-gone", h.time.now(), Duration.ofMinutes(2)).orElseThrow();
    stored.transition(later.id(), lease, Transition.retryAt(h.time.now(), h.time.now().plus(Duration.ofHours(1)), "503"));
    OutboxDispatcher outbox = OutboxDispatcher.builder(h.executor).clock(h.time.clock())
        .scheduler(h.time.scheduler()).pollInterval(Duration.ofSeconds(1))
        .registerAsync("create-order", (request, key) -> CompletableFuture.completedFuture(
            ScriptedTransport.response(201))).build().start();
    try {
      CompletableFuture<Boolean> drained = outbox.shutdown(Duration.ofMinutes(10));
      h.time.advance(Duration.ofSeconds(5));

      assertTrue(!drained.isDone(), "create-order is still PENDING: not drained");
      assertEquals(OperationState.PENDING, stored.find(later.id()).orElseThrow().state());
      h.time.advance(Duration.ofMinutes(10));
      assertEquals(false, drained.get(), "stopped by the timeout, the operation left PENDING");
    } finally {
      outbox.close();
    }
  }

  @Test
  void journalDefaultsPageOnPastShortPages() throws Exception {
    InMemoryJournal stored = new InMemoryJournal();
    Journal journal = withJournalDefaults(new OneRecordPages(stored));
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(2));
    List<Operation> ops = new ArrayList<>();
    Instant firstCreated = h.time.now();
    for (int i = 0; i < 6; i++) {
      ops.add(order(i));
      h.executor.enqueue(ops.get(i));
      h.time.advance(Duration.ofSeconds(1));
    }
    stored.claim(ops.get(2).id(), Harness.OWNER, h.time.now(), Duration.ofMinutes(2)).orElseThrow();
    stored.claim(ops.get(4).id(), Harness.OWNER, h.time.now(), Duration.ofMinutes(2)).orElseThrow();
    // Another owner's live lease: read in the first part of findDue by owner and left out.
    Operation foreign = order(99);
    h.executor.enqueue(foreign);
    stored.claim(foreign.id(), "pod-live", h.time.now(), Duration.ofMinutes(2)).orElseThrow();

    assertEquals(4, journal.count(OperationState.PENDING), "count pages to the end");
    assertEquals(Optional.of(firstCreated), journal.oldestCreatedAt(OperationState.PENDING));
    List<IdempotencyKey> sent = Collections.synchronizedList(new ArrayList<>());
    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(recording(sent), o -> { }, f -> { throw new AssertionError(f); })));

    Map<IdempotencyKey, Integer> perKey = new HashMap<>();
    sent.forEach(k -> perKey.merge(k, 1, Integer::sum));
    assertEquals(6, sent.size(), "every due operation, own leases and the rest: " + sent);
    for (Operation op : ops) {
      assertEquals(1, perKey.getOrDefault(op.key(), 0), "once: " + op.key());
    }
    assertEquals(0, perKey.getOrDefault(foreign.key(), 0), "another owner's live lease is not taken");
    assertEquals(1, summary.leasedElsewhere(), summary.toString());
  }
}
