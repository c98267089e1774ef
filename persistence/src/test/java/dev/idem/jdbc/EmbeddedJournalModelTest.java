package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.AttemptRecord;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.Classification;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.StaleOwnerException;
import dev.idem.core.spi.Takeover;
import dev.idem.core.spi.Transition;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Path;
import java.time.Duration;
import dev.idem.jdbc.internal.CrashRecovery;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A seeded, randomized model test of the embedded SQLite journal ({@link JdbcJournal#openEmbedded})
 * against the reference {@link InMemoryJournal}. Both get the same random sequence of calls, and after every
 * call they must return the same result (or throw the same exception type) and hold the same record
 * for every identity the sequence has named. Every few dozen calls the journal is closed and
 * reopened from its directory, and must then hold exactly the same records, once the reference has
 * settled its IN_FLIGHT operations as reopening does (their holder is gone; see {@code CrashRecovery}).
 *
 * <p>Records are compared whole ({@link OperationRecord#equals}). The generator stays within what
 * the journal stores exactly, as documented on {@link JdbcJournal}: no secret headers, response
 * bodies of at most {@link JdbcJournal#DEFAULT_MAX_STORED_RESPONSE_BODY} bytes, request bodies far
 * below {@link JdbcJournal#DEFAULT_MAX_REQUEST_BODY}, reasons of at most 2,000 characters, owners
 * and references that fit their columns (the journal refuses longer ones at the call, which
 * {@code EmbeddedJournalStorageTest} checks), no unpaired surrogates, and positive lease
 * durations.
 *
 * <p>The seed is fixed; run another with {@code -Didem.model.seed=N} (the seed a failure reports
 * reproduces that trial as trial 0), and scale with {@code -Didem.model.trials} and
 * {@code -Didem.model.steps}. A failure reports the seed, the step, expected (in-memory) and actual
 * (SQLite) values, and a shortened sequence of calls that still disagrees.
 */
class EmbeddedJournalModelTest {
  /** The fixed time of the journal's own clock, which stamps what a reopen settles. */
  private static final Instant REOPENED_AT = Instant.parse("2026-11-30T12:00:00.123456789Z");
  private static final long SEED = Long.getLong("idem.model.seed", 0x1DE3_2026_1130L);
  private static final int TRIALS = Integer.getInteger("idem.model.trials", 5);
  private static final int STEPS = Integer.getInteger("idem.model.steps", 300);
  /** How long a failing sequence may be shortened before it is reported. */
  private static final Duration MINIMIZE_BUDGET = Duration.ofSeconds(90);

  @TempDir
  Path tmp;

  // ---------------------------------------------------------------------------------------------
  // The sequential model test

  @Test
  void randomCallSequencesAgreeWithTheInMemoryJournalAcrossReopens() throws Exception {
    for (int trial = 0; trial < TRIALS; trial++) {
      long seed = SEED + trial * 0x9E37_79B9_7F4A_7C15L;
      long started = System.nanoTime();
      List<Call> calls = new ArrayList<>();
      Map<String, Integer> tally = new TreeMap<>();
      Disagreement found = null;
      try (Harness h = new Harness(tmp.resolve("trial-" + trial))) {
        Generator g = new Generator(seed, h.reference);
        int nextReopen = g.reopenGap();
        for (int step = 0; step < STEPS; step++) {
          Call call;
          if (step == nextReopen) {
            call = new Reopen();
            nextReopen += g.reopenGap();
          } else {
            call = g.next();
          }
          calls.add(call);
          Outcome expected = h.step(step, call);
          tally.merge(label(call, expected), 1, Integer::sum);
          g.checkIntent(seed, step, call, expected);
          g.observe(call, expected);
        }
        Reopen last = new Reopen();
        calls.add(last);
        h.step(STEPS, last);
      } catch (Disagreement d) {
        found = d;
      }
      if (found != null) {
        List<Call> failing = new ArrayList<>(calls.subList(0, Math.min(calls.size(), found.step + 1)));
        Minimized m = minimize(failing, found);
        fail(report(seed, trial, found, failing.size(), m));
      }
      System.out.printf("EmbeddedJournalModelTest: trial %d, seed %d (0x%x): %d calls agree (%d ms) %s%n", trial, seed,
          seed, calls.size(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), tally);
    }
  }

  /** What a call did, for the per-trial tally: its kind, and its exception or notable result. */
  private static String label(Call call, Outcome outcome) {
    String kind = call.getClass().getSimpleName();
    if (outcome.error() != null) {
      return kind + "->" + outcome.error().substring(outcome.error().lastIndexOf('.') + 1);
    }
    if (outcome.value() instanceof BeginResult r) {
      return kind + (r.created() ? "(created)" : "(existing)");
    }
    if (call instanceof Claim && outcome.value() instanceof Optional<?> o) {
      return kind + (o.isPresent() ? "(granted)" : "(refused)");
    }
    if (call instanceof Purge && outcome.value() instanceof Integer n) {
      return kind + (n > 0 ? "(deleted some)" : "(deleted none)");
    }
    return kind;
  }

  // ---------------------------------------------------------------------------------------------
  // The concurrent trial

  private static final int THREADS = 8;
  private static final int OPS_PER_THREAD = 40;

  /** What one worker left behind: an operation and the state it must end in. */
  private record Finished(OperationId id, OperationState state) {
  }

  @Test
  void concurrentWritersOnTheirOwnKeysAgreeWithTheInMemoryJournalAndSurviveAReopen() throws Exception {
    Path dir = tmp.resolve("concurrent");
    InMemoryJournal reference = new InMemoryJournal();
    List<Finished> finished = new ArrayList<>();
    JdbcJournal h2 = JdbcJournal.openEmbedded(dir);
    try {
      ExecutorService pool = Executors.newFixedThreadPool(THREADS);
      try {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<List<Finished>>> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
          int thread = t;
          JdbcJournal journal = h2;
          workers.add(pool.submit(() -> worker(thread, journal, reference, go)));
        }
        go.countDown();
        for (Future<List<Finished>> w : workers) {
          try {
            finished.addAll(w.get(120, TimeUnit.SECONDS));
          } catch (ExecutionException e) {
            if (e.getCause() instanceof AssertionError a) {
              throw a;
            }
            throw e;
          }
        }
      } finally {
        pool.shutdownNow();
      }
      assertEquals(THREADS * OPS_PER_THREAD, finished.size());
      checkAll("before reopening", finished, reference, h2);
      h2.close();
      h2 = Harness.open(dir);
      checkAll("after reopening", finished, reference, h2);
    } finally {
      h2.close();
    }
  }

  /**
   * One writer: begins its own operations, claims each one to three times, records attempts,
   * schedules retries and finishes it, with now and then a write under a stale lease, a look-up by
   * its own reference, and queries and a no-op purge that make the store apply everything and
   * checkpoint while the others write. Every call goes to both journals, and results must agree.
   */
  private static List<Finished> worker(int thread, JdbcJournal h2, InMemoryJournal reference, CountDownLatch go)
      throws Exception {
    Random rnd = new Random(SEED * 31 + thread);
    go.await();
    String scope = "tenant-" + (thread % 3);
    String myReference = "thread-" + thread;
    String owner = "worker-" + thread;
    Instant now = T0;
    List<Finished> finished = new ArrayList<>();
    for (int i = 0; i < OPS_PER_THREAD; i++) {
      OperationId id = new OperationId(scope, thread % 2 == 0 ? "create-order" : "refund",
          IdempotencyKey.of(String.format("t%d-%03d-%s", thread, i, IdempotencyKey.generate(rnd))));
      RequestSnapshot request = jsonRequest("{\"amount\":" + rnd.nextInt(1000) + ",\"thread\":" + thread + "}",
          "trace-" + i);
      NewOperation op = new NewOperation(id, rnd.nextBoolean() ? myReference : null,
          Fingerprinter.defaults().fingerprint(request), request, now);
      both("begin " + id, h2, reference, j -> j.begin(op), null);
      int rounds = 1 + rnd.nextInt(3);
      Lease previous = null;
      OperationState end = null;
      for (int round = 0; round < rounds; round++) {
        now = now.plusMillis(1 + rnd.nextInt(2000)).plusNanos(rnd.nextInt(1_000_000));
        Instant at = now;
        Lease lease = ((Optional<?>) both("claim " + id, h2, reference,
            j -> j.claim(id, owner, at, Duration.ofSeconds(30)), null)).map(Lease.class::cast).orElseThrow();
        int attempts = 1 + rnd.nextInt(2);
        for (int a = 0; a < attempts; a++) {
          AttemptRecord attempt = new AttemptRecord(round * 2 + a + 1, lease.generation(), at, at.plusMillis(5 + a),
              Classification.values()[rnd.nextInt(Classification.values().length)], rnd.nextBoolean() ? 503 : null,
              null, "attempt " + a, Duration.ofMillis(rnd.nextInt(5000)), "decision " + a);
          both("recordAttempt " + id, h2, reference, j -> {
            j.recordAttempt(id, lease, attempt);
            return "recorded";
          }, null);
        }
        if (previous != null && rnd.nextInt(2) == 0) {
          Lease stale = previous;
          both("stale transition " + id, h2, reference, j -> j.transition(id, stale,
              Transition.finish(OperationState.FAILED, at, null, "stale")), StaleOwnerException.class);
        }
        Transition t;
        if (round == rounds - 1) {
          end = List.of(OperationState.SUCCEEDED, OperationState.FAILED, OperationState.UNCERTAIN)
              .get(rnd.nextInt(3));
          t = Transition.finish(end, at.plusMillis(10), end == OperationState.UNCERTAIN ? null
              : response(end == OperationState.SUCCEEDED ? 201 : 422, "{\"op\":" + i + "}"), "finished " + end);
        } else {
          t = Transition.retryAt(at.plusMillis(10), at.plusSeconds(1 + rnd.nextInt(60)), "503, retry later");
        }
        both("transition " + id + " to " + t.target(), h2, reference, j -> j.transition(id, lease, t), null);
        previous = lease;
      }
      finished.add(new Finished(id, end));
      switch (rnd.nextInt(12)) {
        case 0 -> both("findByReference " + scope + "/" + myReference, h2, reference,
            j -> j.findByReference(scope, myReference), null);
        case 1 -> both("no-op purge", h2, reference, j -> j.purge(T0.minus(Duration.ofDays(365))), null);
        case 2 -> h2.findDue(now, null, 20); // other threads' rows: not comparable, run for the lock traffic
        case 3 -> h2.findByState(OperationState.PENDING, null, 20);
        case 4 -> h2.flush();
        default -> {
          // most operations go by without a query
        }
      }
    }
    return finished;
  }

  /** Every operation is there in its final state, and both journals hold exactly the same records. */
  private static void checkAll(String when, List<Finished> finished, InMemoryJournal reference, JdbcJournal h2)
      throws Exception {
    for (Finished f : finished) {
      OperationRecord expected = reference.find(f.id()).orElseThrow();
      Optional<OperationRecord> actual = h2.find(f.id());
      if (actual.isEmpty() || !actual.get().equals(expected)) {
        fail(when + ": find(" + f.id() + ")\n  expected (in-memory): " + show(Optional.of(expected))
            + "\n  actual (SQLite):      " + show(actual)
            + (actual.isPresent() ? "\n  differs in: " + diff(expected, actual.get()) : ""));
      }
      assertEquals(f.state(), actual.get().state(), when + ": final state of " + f.id());
    }
    for (OperationState state : OperationState.values()) {
      List<OperationRecord> expected = flatten(pages(reference, null, 17, (j, after, n) -> j.findByState(state, after, n)));
      List<OperationRecord> actual = flatten(pages(h2, null, 17, (j, after, n) -> j.findByState(state, after, n)));
      if (!expected.equals(actual)) {
        fail(when + ": findByState(" + state + ") differs: " + explain(expected, actual));
      }
      assertEquals(reference.count(state), h2.count(state), when + ": count(" + state + ")");
    }
  }

  private interface JournalCall {
    Object run(Journal j) throws Exception;
  }

  /** Runs a call on the reference and on H2; both must return equal values or throw the same type. */
  private static Object both(String what, JdbcJournal h2, InMemoryJournal reference, JournalCall call,
      Class<? extends Exception> expectedError) {
    Outcome expected = Outcome.of(() -> call.run(reference));
    Outcome actual = Outcome.of(() -> call.run(h2));
    if (expectedError != null && !expectedError.getName().equals(expected.error())) {
      fail("test bug: " + what + " was meant to throw " + expectedError.getSimpleName() + " but the in-memory"
          + " journal gave " + expected.show());
    }
    if (!expected.agrees(actual)) {
      fail(Thread.currentThread().getName() + ": " + what + "\n  expected (in-memory): " + expected.show()
          + "\n  actual (SQLite):      " + actual.show() + "\n  " + explain(expected.value(), actual.value()));
    }
    return expected.value();
  }

  // ---------------------------------------------------------------------------------------------
  // Calls: concrete, replayable steps of a sequence

  /** One call of a sequence, with every argument fixed, so that a sequence can be replayed. */
  private interface Call {
    Object apply(Journal j) throws Exception;

    /** The identities the call names (compared after every later step). */
    default List<OperationId> ids() {
      return List.of();
    }

    /** The exception the generator meant the call to raise, or null. */
    default Class<? extends Exception> intent() {
      return null;
    }
  }

  private record Begin(NewOperation op, Class<? extends Exception> intent) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return j.begin(op);
    }

    @Override
    public List<OperationId> ids() {
      return List.of(op.id());
    }

    @Override
    public String toString() {
      RequestSnapshot r = op.request();
      return "begin(" + op.id() + ", reference=" + quote(op.reference()) + ", createdAt=" + op.createdAt() + ", "
          + r.method() + " " + r.uri() + ", headers=" + r.headers() + ", contentType="
          + r.contentType().orElse(null) + ", body=" + body(r.body()) + ", fingerprint=" + op.fingerprint().hex()
          .substring(0, 12) + "...)" + (intent == null ? "" : "  [expect " + intent.getSimpleName() + "]");
    }
  }

  private record Claim(OperationId id, String owner, Instant now, Duration leaseFor) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return j.claim(id, owner, now, leaseFor);
    }

    @Override
    public List<OperationId> ids() {
      return List.of(id);
    }

    @Override
    public String toString() {
      return "claim(" + id + ", owner=" + shortQuote(owner) + ", now=" + now + ", leaseFor=" + leaseFor + ")";
    }
  }

  private record RecordAttempt(OperationId id, Lease lease, AttemptRecord attempt,
      Class<? extends Exception> intent) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      j.recordAttempt(id, lease, attempt);
      return "recorded";
    }

    @Override
    public List<OperationId> ids() {
      return List.of(id);
    }

    @Override
    public String toString() {
      return "recordAttempt(" + id + ", " + lease + ", " + attempt + ")"
          + (intent == null ? "" : "  [expect " + intent.getSimpleName() + "]");
    }
  }

  private record Move(OperationId id, Lease lease, Transition transition, Class<? extends Exception> intent)
      implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return j.transition(id, lease, transition);
    }

    @Override
    public List<OperationId> ids() {
      return List.of(id);
    }

    @Override
    public String toString() {
      return "transition(" + id + ", " + lease + ", " + show(transition) + ")"
          + (intent == null ? "" : "  [expect " + intent.getSimpleName() + "]");
    }
  }

  private record Abandon(OperationId id, Transition transition) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return j.abandon(id, transition);
    }

    @Override
    public List<OperationId> ids() {
      return List.of(id);
    }

    @Override
    public String toString() {
      return "abandon(" + id + ", " + show(transition) + ")";
    }
  }

  private record Redrive(OperationId id, Instant now) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return j.redrive(id, now);
    }

    @Override
    public List<OperationId> ids() {
      return List.of(id);
    }

    @Override
    public String toString() {
      return "redrive(" + id + ", now=" + now + ")";
    }
  }

  private record Find(OperationId id) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return j.find(id);
    }

    @Override
    public List<OperationId> ids() {
      return List.of(id);
    }

    @Override
    public String toString() {
      return "find(" + id + ")";
    }
  }

  /**
   * Pages through findDue from {@code after}; the result is every record, in order (where a page
   * ends is each journal's own choice).
   */
  private record FindDue(Instant now, OperationId after, int pageSize) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return flatten(pages(j, after, pageSize, (journal, from, n) -> journal.findDue(now, from, n)));
    }

    @Override
    public String toString() {
      return "findDue(now=" + now + ", after=" + after + ", pages of " + pageSize + ")";
    }
  }

  /**
   * Pages through findByState from {@code after}; the result is every record, in order (where a page
   * ends is each journal's own choice).
   */
  private record FindByState(OperationState state, OperationId after, int pageSize) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return flatten(pages(j, after, pageSize, (journal, from, n) -> journal.findByState(state, from, n)));
    }

    @Override
    public String toString() {
      return "findByState(" + state + ", after=" + after + ", pages of " + pageSize + ")";
    }
  }

  private record RecordDelivered(OperationId id, Instant at) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return j.recordOutcomeDelivered(id, at);
    }

    @Override
    public List<OperationId> ids() {
      return List.of(id);
    }

    @Override
    public String toString() {
      return "recordOutcomeDelivered(" + id + ", at=" + at + ")";
    }
  }

  private record RecordDeliveredBatch(List<OperationId> ids, Instant at) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return j.recordOutcomesDelivered(ids, at);
    }

    @Override
    public String toString() {
      return "recordOutcomesDelivered(" + ids + ", at=" + at + ")";
    }

    @Override
    public List<OperationId> ids() {
      return ids;
    }
  }

  /**
   * Pages through findUndelivered from {@code after}; the result is every record, in order (where a page
   * ends is each journal's own choice).
   */
  private record FindUndelivered(OperationId after, int pageSize) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return flatten(pages(j, after, pageSize, Journal::findUndelivered));
    }

    @Override
    public String toString() {
      return "findUndelivered(after=" + after + ", pages of " + pageSize + ")";
    }
  }

  private record FindByReference(String scope, String reference) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return j.findByReference(scope, reference);
    }

    @Override
    public String toString() {
      return "findByReference(" + quote(scope) + ", " + quote(reference) + ")";
    }
  }

  private record Purge(Instant before) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return j.purge(before);
    }

    @Override
    public String toString() {
      return "purge(before=" + before + ")";
    }
  }

  private record Count(OperationState state) implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      return List.of(j.count(state), j.oldestCreatedAt(state));
    }

    @Override
    public String toString() {
      return "count(" + state + ") and oldestCreatedAt(" + state + ")";
    }
  }

  /** {@link JdbcJournal#flush()}; nothing on the in-memory journal. */
  private record Flush() implements Call {
    @Override
    public Object apply(Journal j) throws Exception {
      if (j instanceof JdbcJournal jdbc) {
        jdbc.flush();
      }
      return "flushed";
    }

    @Override
    public String toString() {
      return "flush()";
    }
  }

  /** Closes the H2 journal and opens it again from its directory; the harness runs it. */
  private record Reopen() implements Call {
    @Override
    public Object apply(Journal j) {
      throw new UnsupportedOperationException("the harness reopens");
    }

    @Override
    public String toString() {
      return "close() and JdbcJournal.openEmbedded(dir)";
    }
  }

  private interface PageQuery {
    List<OperationRecord> page(Journal j, OperationId after, int limit) throws Exception;
  }

  /**
   * Every page from {@code after} on, as the journal pages itself (each page after the last id of
   * the previous), up to the first empty page: a journal may end a page short while more follow
   * (the JDBC journal does by the bytes a page holds), so a short page is not the last.
   */
  private static List<List<OperationRecord>> pages(Journal j, OperationId after, int size, PageQuery query)
      throws Exception {
    List<List<OperationRecord>> pages = new ArrayList<>();
    OperationId cursor = after;
    for (List<OperationRecord> page; !(page = query.page(j, cursor, size)).isEmpty(); ) {
      if (pages.size() == 10_000) {
        throw new IllegalStateException("no empty page after 10000 pages of " + size + " from " + after);
      }
      pages.add(page);
      cursor = page.get(page.size() - 1).id();
    }
    return pages;
  }

  private static List<OperationRecord> flatten(List<List<OperationRecord>> pages) {
    List<OperationRecord> all = new ArrayList<>();
    pages.forEach(all::addAll);
    return all;
  }

  // ---------------------------------------------------------------------------------------------
  // Running calls on both journals

  /** A call's result: a value, or the type and message of what it threw. Agreement ignores messages. */
  private record Outcome(Object value, String error, String message) {
    interface Body {
      Object run() throws Exception;
    }

    static Outcome of(Body body) {
      try {
        return new Outcome(body.run(), null, null);
      } catch (Exception e) {
        return new Outcome(null, e.getClass().getName(), e.getMessage());
      }
    }

    boolean agrees(Outcome other) {
      return Objects.equals(error, other.error) && Objects.equals(value, other.value);
    }

    String show() {
      return error != null ? "threw " + error + ": " + message : EmbeddedJournalModelTest.show(value);
    }
  }

  /** The two journals disagreed. */
  private static final class Disagreement extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int step;
    final transient Call call;
    final String what;
    final transient Outcome expected;
    final transient Outcome actual;

    Disagreement(int step, Call call, String what, Outcome expected, Outcome actual) {
      super("step " + step + ": " + what, null, false, false);
      this.step = step;
      this.call = call;
      this.what = what;
      this.expected = expected;
      this.actual = actual;
    }

    String details() {
      return "at step " + step + ", call: " + call + "\n  compared: " + what
          + "\n  expected (in-memory): " + expected.show()
          + "\n  actual (SQLite):      " + actual.show()
          + "\n  " + explain(expected.value(), actual.value());
    }
  }

  /** The two journals, and every identity named so far. */
  private static final class Harness implements AutoCloseable {
    final Path dir;
    final InMemoryJournal reference = new InMemoryJournal();
    JdbcJournal h2;
    final Set<OperationId> known = new LinkedHashSet<>();

    Harness(Path dir) throws Exception {
      this.dir = dir;
      this.h2 = open(dir);
    }

    /** Opens with a fixed clock, so that what reopening settles carries a time the model knows. */
    static JdbcJournal open(Path dir) throws Exception {
      return JdbcJournal.embedded(dir).clock(Clock.fixed(REOPENED_AT, ZoneOffset.UTC)).open();
    }

    /**
     * What reopening does to an IN_FLIGHT operation (its holder is gone): unless the attempt of its
     * generation was recorded, an AMBIGUOUS attempt is added, and it is PENDING again, due now.
     */
    void settleReferenceAsReopenDoes() throws Exception {
      for (OperationRecord r : reference.findByState(OperationState.IN_FLIGHT, null, Integer.MAX_VALUE)) {
        Lease lease = new Lease(r.owner(), r.generation(),
            r.leaseExpiresAt() == null ? REOPENED_AT : r.leaseExpiresAt(), false);
        Optional<AttemptRecord> owed = Takeover.owedAttempt(r.attempts(), r.generation(), REOPENED_AT);
        if (owed.isPresent()) {
          reference.recordAttempt(r.id(), lease, owed.get());
        }
        reference.transition(r.id(), lease, Transition.retryAt(REOPENED_AT, REOPENED_AT, CrashRecovery.REASON));
      }
    }

    /**
     * Runs a call on both journals (or reopens H2), requires the same outcome, then compares the
     * record of every identity named so far (after a reopen: everything, through every query).
     *
     * @return the reference journal's outcome
     */
    Outcome step(int step, Call call) throws Disagreement {
      if (call instanceof Reopen) {
        Outcome reopened = Outcome.of(() -> {
          try {
            h2.close();
          } finally {
            h2 = open(dir);
          }
          settleReferenceAsReopenDoes();
          return "reopened";
        });
        Outcome expected = new Outcome("reopened", null, null);
        if (!expected.agrees(reopened)) {
          throw new Disagreement(step, call, "close and reopen", expected, reopened);
        }
        compareEverything(step, call);
        return expected;
      }
      known.addAll(call.ids());
      Outcome expected = Outcome.of(() -> call.apply(reference));
      Outcome actual = Outcome.of(() -> call.apply(h2));
      if (!expected.agrees(actual)) {
        throw new Disagreement(step, call, "the call's result", expected, actual);
      }
      compareKnown(step, call);
      return expected;
    }

    void compareKnown(int step, Call call) {
      for (OperationId id : known) {
        Outcome expected = Outcome.of(() -> reference.find(id));
        Outcome actual = Outcome.of(() -> h2.find(id));
        if (!expected.agrees(actual)) {
          throw new Disagreement(step, call, "find(" + id + ") after the call", expected, actual);
        }
      }
    }

    void compareEverything(int step, Call call) {
      compareKnown(step, call);
      for (OperationState state : OperationState.values()) {
        Outcome expected = Outcome.of(() -> flatten(pages(reference, null, 41,
            (j, after, n) -> j.findByState(state, after, n))));
        Outcome actual = Outcome.of(() -> flatten(pages(h2, null, 41, (j, after, n) -> j.findByState(state, after, n))));
        if (!expected.agrees(actual)) {
          throw new Disagreement(step, call, "every " + state + " record (findByState) after the call", expected,
              actual);
        }
      }
    }

    @Override
    public void close() {
      try {
        h2.close();
      } catch (Exception ignored) {
        // the test has failed already, or the journal is being replayed; release what can be
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The generator

  private static final String[] SCOPES = {"tenant-a", "tenant-b", "Tenant-A"};
  private static final String[] OPERATIONS = {"create-order", "refund", "pay.v2"};
  private static final String[] OWNERS = {"node-a", "node-b", "worker-ß", "", "n".repeat(200)};
  private static final String[] REFERENCES = {"cart-1", "cart-2", "order-ü", "r".repeat(200)};
  private static final String[] REASONS = {null, "503 Service Unavailable", "read timeout", "délai dépassé ⏱", "",
      "past key retention", "x".repeat(2000)};
  // Every kind of character a key may hold (core's KeyHeader: visible ASCII but '"', ',' and '\\').
  private static final String KEY_CHARS = "ABCZabcz0189-_.~!$'()*+;=:@/?#%&<>[]^`{|}";

  /**
   * Draws calls from the current state of the reference journal: mostly calls that succeed (a claim
   * of a claimable operation, a write under its current lease), and some that must fail the same
   * way on both (a stale lease, a reused key, an illegal abandon or re-drive, an unknown identity).
   * Deterministic for a seed, since the reference journal is.
   */
  private static final class Generator {
    private final Random rnd;
    private final InMemoryJournal model;
    private Instant now = T0;
    /** Every identity begun at least once, in order (some may have been purged since). */
    private final List<OperationId> begun = new ArrayList<>();
    private final Set<OperationId> begunSet = new LinkedHashSet<>();
    /** The operation that last created each identity. */
    private final Map<OperationId, NewOperation> created = new HashMap<>();
    /** Every lease each identity's claims returned, oldest first. */
    private final Map<OperationId, List<Lease>> leases = new HashMap<>();

    Generator(long seed, InMemoryJournal model) {
      this.rnd = new Random(seed);
      this.model = model;
    }

    int reopenGap() {
      return 25 + rnd.nextInt(60);
    }

    Call next() throws Exception {
      advanceClock();
      if (begun.isEmpty()) {
        return beginNew();
      }
      int roll = rnd.nextInt(100);
      Call c;
      if (roll < 15) {
        c = beginNew();
      } else if (roll < 19) {
        c = beginAgainSameFingerprint();
      } else if (roll < 22) {
        c = beginAgainOtherBody();
      } else if (roll < 36) {
        c = claim();
      } else if (roll < 46) {
        c = recordAttempt();
      } else if (roll < 61) {
        c = transition();
      } else if (roll < 65) {
        c = abandon();
      } else if (roll < 69) {
        c = redrive();
      } else if (roll < 72) {
        c = staleWrite();
      } else if (roll < 74) {
        c = recordDelivered();
      } else if (roll < 75) {
        c = new FindUndelivered(after(), 1 + rnd.nextInt(7));
      } else if (roll < 78) {
        c = new Find(rnd.nextInt(5) == 0 ? freshId() : pick(begun));
      } else if (roll < 82) {
        c = new FindDue(now.plusSeconds(rnd.nextInt(120) - 30).plusNanos(rnd.nextInt(1_000_000_000)), after(),
            1 + rnd.nextInt(7));
      } else if (roll < 86) {
        c = new FindByState(pick(OperationState.values()), after(), 1 + rnd.nextInt(7));
      } else if (roll < 89) {
        c = new FindByReference(pick(SCOPES), pick(REFERENCES));
      } else if (roll < 92) {
        c = new Purge(now.minusSeconds(rnd.nextInt(400)).minusNanos(rnd.nextInt(1_000_000_000)));
      } else if (roll < 95) {
        c = new Count(pick(OperationState.values()));
      } else if (roll < 97) {
        c = new Flush();
      } else {
        c = unknownIdentity();
      }
      return c != null ? c : beginNew();
    }

    /** Requires the reference journal to have done what the generator meant (else the generator is wrong). */
    void checkIntent(long seed, int step, Call call, Outcome reference) {
      Class<? extends Exception> intent = call.intent();
      if (intent != null && !intent.getName().equals(reference.error())) {
        fail("test bug (seed " + seed + ", step " + step + "): " + call + " was meant to throw "
            + intent.getSimpleName() + ", but the in-memory journal gave " + reference.show());
      }
    }

    /** Learns the leases claims returned and which operation created each identity. */
    void observe(Call call, Outcome reference) {
      if (call instanceof Claim c && reference.value() instanceof Optional<?> lease && lease.isPresent()) {
        leases.computeIfAbsent(c.id(), k -> new ArrayList<>()).add((Lease) lease.get());
      } else if (call instanceof Begin b && reference.value() instanceof BeginResult r && r.created()) {
        created.put(b.op().id(), b.op());
        if (begunSet.add(b.op().id())) {
          begun.add(b.op().id());
        }
      }
    }

    private void advanceClock() {
      int roll = rnd.nextInt(100);
      long nanos = roll < 70 ? rnd.nextLong(2_000_000_000L)
          : roll < 95 ? 2_000_000_000L + rnd.nextLong(40_000_000_000L)
          : 60_000_000_000L + rnd.nextLong(600_000_000_000L);
      now = now.plusNanos(nanos);
    }

    // ---- begin

    private Call beginNew() {
      OperationId id = freshId();
      return new Begin(newOperation(id, request()), null);
    }

    private Call beginAgainSameFingerprint() {
      if (created.isEmpty()) {
        return null;
      }
      NewOperation original = created.get(pick(begun));
      if (original == null) {
        return null;
      }
      NewOperation op = switch (rnd.nextInt(3)) {
        case 0 -> original;
        case 1 -> new NewOperation(original.id(), rnd.nextBoolean() ? null : pick(REFERENCES),
            original.fingerprint(), original.request(), now);
        default -> {
          // Another trace header: not part of the fingerprint, so the same intent.
          RequestSnapshot other = original.request().toBuilder().header("X-Trace", "retry-" + rnd.nextInt(1000))
              .build();
          yield new NewOperation(original.id(), original.reference(), Fingerprinter.defaults().fingerprint(other),
              other, now);
        }
      };
      return new Begin(op, expectedReuse(op));
    }

    private Call beginAgainOtherBody() {
      NewOperation original = created.get(pick(begun));
      if (original == null) {
        return null;
      }
      RequestSnapshot other;
      do {
        other = request();
      } while (Fingerprinter.defaults().fingerprint(other).equals(original.fingerprint()));
      NewOperation op = newOperation(original.id(), other);
      return new Begin(op, expectedReuse(op));
    }

    /** A begin of a held identity with another fingerprint is refused; of a purged one, it creates it again. */
    private Class<? extends Exception> expectedReuse(NewOperation op) {
      Optional<OperationRecord> held = find(op.id());
      return held.isPresent() && !held.get().fingerprint().equals(op.fingerprint())
          ? IdempotencyKeyReusedException.class : null;
    }

    private NewOperation newOperation(OperationId id, RequestSnapshot request) {
      Instant createdAt = switch (rnd.nextInt(4)) {
        case 0 -> now.truncatedTo(ChronoUnit.SECONDS); // ties, for findByReference's order
        case 1 -> now.minusMillis(rnd.nextInt(5000));
        default -> now;
      };
      String reference = rnd.nextInt(3) == 0 ? null : pick(REFERENCES);
      boolean queued = rnd.nextInt(3) == 0;
      return new NewOperation(id, reference, Fingerprinter.defaults().fingerprint(request), request, createdAt,
          queued);
    }

    /** Mostly of a terminal operation (the others record nothing), now or at another node's time. */
    private Call recordDelivered() {
      List<OperationRecord> terminal = records(r -> r.state().isTerminal());
      Instant at = rnd.nextInt(8) == 0 ? now.minusMillis(rnd.nextInt(5000)) : now;
      if (rnd.nextInt(3) == 0) {
        // A resume's batch: terminal or not, and the same operation twice at times.
        List<OperationId> ids = new ArrayList<>();
        for (int i = 1 + rnd.nextInt(4); i > 0; i--) {
          ids.add(!terminal.isEmpty() && rnd.nextInt(4) != 0 ? pick(terminal).id() : pick(begun));
        }
        return new RecordDeliveredBatch(ids, at);
      }
      OperationId id = !terminal.isEmpty() && rnd.nextInt(5) != 0 ? pick(terminal).id() : pick(begun);
      return new RecordDelivered(id, at);
    }

    private RequestSnapshot request() {
      String[] uris = {"https://api.example.test/v1/orders", "https://api.example.test/v1/refunds?currency=EUR&x=1",
          "http://localhost:8080/pay%20ments/%C3%BC?q=a+b"};
      String[] methods = {"POST", "POST", "POST", "PUT", "PATCH", "DELETE"};
      RequestSnapshot.Builder b = RequestSnapshot.builder(pick(methods), URI.create(pick(uris)));
      if (rnd.nextBoolean()) {
        b.header("X-Trace", "t" + rnd.nextInt(100));
      }
      if (rnd.nextInt(4) == 0) {
        b.header("Accept", "application/json").header("accept", "text/plain;q=0.5");
      }
      if (rnd.nextInt(6) == 0) {
        b.header("Stripe-Account", "acct_" + rnd.nextInt(10)).header("X-Empty", "");
      }
      int roll = rnd.nextInt(40);
      if (roll == 0) {
        b.body(new byte[0], null);
      } else if (roll == 1) {
        b.body(("plain text, ünïcödé " + rnd.nextInt(10)).getBytes(UTF_8), "text/plain; charset=utf-8");
      } else if (roll == 2) {
        b.body(bytes(1 + rnd.nextInt(300)), "application/octet-stream");
      } else if (roll == 3) {
        // Larger than the log's 64 KiB write buffer once encoded, well below the request limit.
        StringBuilder s = new StringBuilder("{\"blob\":\"");
        int n = 40_000 + rnd.nextInt(40_000);
        for (int i = 0; i < n; i++) {
          s.append((char) ('a' + rnd.nextInt(26)));
        }
        b.header("Content-Type", "application/json").body(s.append("\"}").toString().getBytes(UTF_8),
            "application/json");
      } else {
        b.header("Content-Type", "application/json").body(("{\"amount\":" + rnd.nextInt(20) + ",\"currency\":\""
            + pick(new String[] {"EUR", "USD", "€"}) + "\"}").getBytes(UTF_8), "application/json");
      }
      return b.build();
    }

    // ---- claims and writes under a lease

    private Call claim() {
      List<OperationRecord> claimable = records(r -> r.state() == OperationState.PENDING
          || (r.state() == OperationState.IN_FLIGHT && !r.isLeasedAt(now)));
      List<OperationRecord> candidates = !claimable.isEmpty() && rnd.nextInt(4) != 0 ? claimable : records(r -> true);
      if (candidates.isEmpty()) {
        return null;
      }
      OperationRecord r = pick(candidates);
      Instant at = rnd.nextInt(8) == 0 ? now.minusMillis(rnd.nextInt(5000)) : now; // another node's clock
      Duration leaseFor = Duration.ofMillis(1 + rnd.nextInt(60_000)).plusNanos(rnd.nextInt(1_000_000));
      return new Claim(r.id(), owner(), at, leaseFor);
    }

    private Call recordAttempt() {
      List<OperationRecord> held = records(r -> r.state() == OperationState.IN_FLIGHT);
      if (held.isEmpty()) {
        return null;
      }
      OperationRecord r = pick(held);
      return new RecordAttempt(r.id(), currentLease(r), attempt(r), null);
    }

    private AttemptRecord attempt(OperationRecord r) {
      Instant ended = now.plusNanos(rnd.nextInt(1_000_000_000));
      Classification c = pick(Classification.values());
      boolean responded = c != Classification.AMBIGUOUS && rnd.nextBoolean();
      return new AttemptRecord(r.attempts().size() + 1, r.generation(), ended.minusMillis(rnd.nextInt(30_000)), ended,
          c, responded ? pick(new Integer[] {200, 201, 409, 429, 503}) : null,
          responded ? null : pick(new String[] {"java.net.SocketTimeoutException", "java.io.IOException", null}),
          pick(new String[] {"read timeout", "HTTP 503", "connection reset", "ok"}),
          Duration.ofNanos(rnd.nextLong(60_000_000_000L)), pick(new String[] {"retry after backoff", "stop", "go on"}));
    }

    private Call transition() {
      List<OperationRecord> held = records(r -> r.state() == OperationState.IN_FLIGHT);
      if (held.isEmpty()) {
        return null;
      }
      OperationRecord r = pick(held);
      return new Move(r.id(), currentLease(r), leasedTransition(), null);
    }

    private Transition leasedTransition() {
      Instant at = now.plusNanos(rnd.nextInt(1_000_000_000));
      int roll = rnd.nextInt(100);
      if (roll < 35) {
        Instant next = at.plusMillis(rnd.nextInt(90_000) - 10_000).plusNanos(rnd.nextInt(1_000_000));
        return rnd.nextInt(10) == 0 ? new Transition(OperationState.PENDING, at, next, response(503), reason())
            : Transition.retryAt(at, next, reason());
      } else if (roll < 60) {
        return Transition.finish(OperationState.SUCCEEDED, at, response(pick(new Integer[] {200, 201, 202, 204})),
            rnd.nextInt(4) == 0 ? reason() : null);
      } else if (roll < 75) {
        return Transition.finish(OperationState.FAILED, at, rnd.nextBoolean() ? response(pick(new Integer[] {400,
            404, 409, 422})) : null, reason());
      } else if (roll < 95) {
        return Transition.finish(OperationState.UNCERTAIN, at, rnd.nextInt(4) == 0 ? response(504) : null,
            reason());
      }
      return new Transition(OperationState.IN_FLIGHT, at, null, null, reason());
    }

    /** A lease that is not the current one: older, another owner, a later generation, or a finished claim. */
    private Call staleWrite() {
      List<OperationRecord> claimed = records(r -> leases.containsKey(r.id()));
      if (claimed.isEmpty()) {
        return null;
      }
      OperationRecord r = pick(claimed);
      List<Lease> history = leases.get(r.id());
      Lease lease = switch (rnd.nextInt(4)) {
        case 0 -> pick(history);
        case 1 -> new Lease(owner() + "-other", r.generation(), now.plusSeconds(30), false);
        case 2 -> new Lease(r.owner() == null ? "node-a" : r.owner(), r.generation() + 1, now.plusSeconds(30), false);
        default -> history.get(history.size() - 1);
      };
      boolean current = r.state() == OperationState.IN_FLIGHT && r.generation() == lease.generation()
          && lease.owner().equals(r.owner());
      if (current) {
        lease = new Lease(lease.owner() + "-stale", lease.generation(), lease.expiresAt(), false);
      }
      return rnd.nextBoolean()
          ? new RecordAttempt(r.id(), lease, attempt(r), StaleOwnerException.class)
          : new Move(r.id(), lease, leasedTransition(), StaleOwnerException.class);
    }

    // ---- unheld changes

    private Call abandon() {
      List<OperationRecord> pending = records(r -> r.state() == OperationState.PENDING);
      List<OperationRecord> candidates = !pending.isEmpty() && rnd.nextInt(10) < 7 ? pending : records(r -> true);
      if (candidates.isEmpty()) {
        return null;
      }
      Instant at = now.plusNanos(rnd.nextInt(1_000_000_000));
      int roll = rnd.nextInt(10);
      Transition t = roll < 4 ? Transition.finish(OperationState.FAILED, at, null, reason())
          : roll < 8 ? Transition.finish(OperationState.UNCERTAIN, at, rnd.nextInt(5) == 0 ? response(504) : null,
              reason())
          : roll < 9 ? Transition.finish(OperationState.SUCCEEDED, at, response(200), null) // not from PENDING
          : new Transition(pick(new OperationState[] {OperationState.PENDING, OperationState.IN_FLIGHT}), at, null,
              null, reason()); // not terminal
      return new Abandon(pick(candidates).id(), t);
    }

    private Call redrive() {
      List<OperationRecord> ended = records(r -> r.state() == OperationState.FAILED
          || r.state() == OperationState.UNCERTAIN);
      List<OperationRecord> candidates = !ended.isEmpty() && rnd.nextInt(10) < 7 ? ended : records(r -> true);
      if (candidates.isEmpty()) {
        return null;
      }
      return new Redrive(pick(candidates).id(), now.plusNanos(rnd.nextInt(1_000_000_000)));
    }

    /** A call on an identity that was never begun: "no such operation" (IllegalStateException) on both. */
    private Call unknownIdentity() {
      OperationId id = freshId();
      Lease lease = new Lease("node-a", 1, now.plusSeconds(30), false);
      return switch (rnd.nextInt(5)) {
        case 0 -> new Claim(id, "node-a", now, Duration.ofSeconds(30));
        case 1 -> new RecordAttempt(id, lease, new AttemptRecord(1, 1, now, now, Classification.SAFE, 200, null, "ok",
            Duration.ZERO, "stop"), null);
        case 2 -> new Move(id, lease, Transition.finish(OperationState.FAILED, now, null, "x"), null);
        case 3 -> new Abandon(id, Transition.finish(OperationState.FAILED, now, null, "x"));
        default -> new Redrive(id, now);
      };
    }

    // ---- values

    private OperationId freshId() {
      IdempotencyKey key;
      if (rnd.nextInt(6) == 0) {
        StringBuilder s = new StringBuilder();
        int n = 1 + rnd.nextInt(rnd.nextInt(10) == 0 ? 255 : 20);
        for (int i = 0; i < n; i++) {
          s.append(KEY_CHARS.charAt(rnd.nextInt(KEY_CHARS.length())));
        }
        key = IdempotencyKey.of(s.toString());
      } else {
        key = IdempotencyKey.generate(rnd);
      }
      return new OperationId(pick(SCOPES), pick(OPERATIONS), key);
    }

    /** Null (the first page), a begun identity, or one that was never begun. */
    private OperationId after() {
      int roll = rnd.nextInt(10);
      return roll < 7 ? null : roll < 9 ? pick(begun) : freshId();
    }

    private ResponseSnapshot response(int status) {
      Map<String, List<String>> headers = new LinkedHashMap<>();
      headers.put("Content-Type", List.of("application/json"));
      if (rnd.nextBoolean()) {
        headers.put("X-Request-Id", List.of("req-" + rnd.nextInt(1000)));
      }
      if (rnd.nextInt(4) == 0) {
        headers.put("Link", List.of("</a>; rel=next", "</b>; rel=prev"));
      }
      if (rnd.nextInt(10) == 0) {
        headers.put("X-None", List.of()); // a header sent without a value
      }
      int roll = rnd.nextInt(60);
      byte[] body = roll == 0 ? new byte[0]
          : roll == 1 ? bytes(JdbcJournal.DEFAULT_MAX_STORED_RESPONSE_BODY) // the largest stored whole
          : roll == 2 ? bytes(1 + rnd.nextInt(2000))
          : ("{\"id\":" + rnd.nextInt(1000) + ",\"note\":\"" + pick(new String[] {"ok", "ça va", "日本"}) + "\"}")
              .getBytes(UTF_8);
      return new ResponseSnapshot(status, headers, body);
    }

    private String owner() {
      return pick(OWNERS);
    }

    private String reason() {
      return pick(REASONS);
    }

    private byte[] bytes(int n) {
      byte[] b = new byte[n];
      rnd.nextBytes(b);
      return b;
    }

    private Lease currentLease(OperationRecord r) {
      List<Lease> history = leases.getOrDefault(r.id(), List.of());
      for (int i = history.size() - 1; i >= 0; i--) {
        Lease l = history.get(i);
        if (l.generation() == r.generation() && l.owner().equals(r.owner())) {
          return l;
        }
      }
      throw new AssertionError("test bug: no lease of " + r.id() + " at generation " + r.generation());
    }

    private Optional<OperationRecord> find(OperationId id) {
      try {
        return model.find(id);
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    }

    private List<OperationRecord> records(Predicate<OperationRecord> filter) {
      List<OperationRecord> out = new ArrayList<>();
      for (OperationId id : begun) {
        find(id).filter(filter).ifPresent(out::add);
      }
      return out;
    }

    private <T> T pick(List<T> from) {
      return from.get(rnd.nextInt(from.size()));
    }

    private <T> T pick(T[] from) {
      return from[rnd.nextInt(from.length)];
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Shortening a failing sequence

  private record Minimized(List<Call> calls, Disagreement disagreement, int replays) {
  }

  private int replayCount;

  /**
   * Removes calls from a disagreeing sequence while some disagreement remains (delta debugging,
   * each candidate replayed on fresh journals), within {@link #MINIMIZE_BUDGET}.
   */
  private Minimized minimize(List<Call> failing, Disagreement original) {
    long deadline = System.nanoTime() + MINIMIZE_BUDGET.toNanos();
    List<Call> current = failing;
    Disagreement last = replay(current);
    if (last == null) {
      return new Minimized(current, original, 1); // it did not recur: report the sequence as it ran
    }
    int replays = 1;
    int parts = 2;
    while (current.size() > 1 && System.nanoTime() < deadline) {
      int chunk = (current.size() + parts - 1) / parts;
      boolean reduced = false;
      for (int start = 0; start < current.size() && System.nanoTime() < deadline; start += chunk) {
        List<Call> candidate = new ArrayList<>(current.subList(0, start));
        candidate.addAll(current.subList(Math.min(current.size(), start + chunk), current.size()));
        if (candidate.isEmpty()) {
          continue;
        }
        replays++;
        Disagreement d = replay(candidate);
        if (d != null) {
          current = candidate;
          last = d;
          parts = Math.max(parts - 1, 2);
          reduced = true;
          break;
        }
      }
      if (!reduced) {
        if (parts >= current.size()) {
          break;
        }
        parts = Math.min(parts * 2, current.size());
      }
    }
    return new Minimized(current, last, replays);
  }

  /** Replays calls on fresh journals; the disagreement they end in, or null. */
  private Disagreement replay(List<Call> calls) {
    try (Harness h = new Harness(tmp.resolve("replay-" + replayCount++))) {
      for (int i = 0; i < calls.size(); i++) {
        h.step(i, calls.get(i));
      }
      return null;
    } catch (Disagreement d) {
      return d;
    } catch (Exception | AssertionError e) {
      return null;
    }
  }

  private static String report(long seed, int trial, Disagreement found, int ran, Minimized m) {
    StringBuilder s = new StringBuilder();
    s.append("The SQLite journal disagrees with the in-memory journal: seed ").append(seed)
        .append(String.format(" (0x%x)", seed)).append(", trial ").append(trial)
        .append("; reproduce with -Didem.model.seed=").append(seed).append(" -Didem.model.trials=1\n");
    s.append("First disagreement ").append(found.details()).append('\n');
    s.append("Shortened to ").append(m.calls().size()).append(" of ").append(ran).append(" calls (")
        .append(m.replays()).append(" replays), which end in a disagreement ").append(m.disagreement().details())
        .append('\n');
    for (int i = 0; i < m.calls().size(); i++) {
      s.append(String.format("  %3d. %s%n", i, m.calls().get(i)));
    }
    return s.toString();
  }

  // ---------------------------------------------------------------------------------------------
  // Showing values and differences

  private static String show(Object v) {
    if (v instanceof OperationRecord r) {
      return "{" + r.id() + " " + r.state() + " gen=" + r.generation() + " owner=" + quote(r.owner()) + " lease="
          + r.leaseExpiresAt() + " next=" + r.nextAttemptAt() + " created=" + r.createdAt() + " updated="
          + r.updatedAt() + " ref=" + quote(r.reference()) + " attempts=" + r.attempts().size() + " response="
          + show(r.response()) + " reason=" + shortQuote(r.reason()) + "}";
    }
    if (v instanceof ResponseSnapshot r) {
      return "HTTP " + r.status() + " " + r.headers() + " body=" + body(r.body());
    }
    if (v instanceof Transition t) {
      return "Transition[" + t.target() + ", at=" + t.at() + ", next=" + t.nextAttemptAt() + ", response="
          + show(t.response()) + ", reason=" + shortQuote(t.reason()) + "]";
    }
    if (v instanceof BeginResult b) {
      return "BeginResult[created=" + b.created() + ", " + show(b.record()) + "]";
    }
    if (v instanceof Optional<?> o) {
      return o.map(x -> "Optional[" + show(x) + "]").orElse("Optional.empty");
    }
    if (v instanceof List<?> list) {
      StringBuilder s = new StringBuilder("[");
      for (int i = 0; i < list.size(); i++) {
        if (i == 8) {
          s.append(", ... ").append(list.size() - 8).append(" more");
          break;
        }
        s.append(i == 0 ? "" : ", ").append(show(list.get(i)));
      }
      return s.append("]").toString();
    }
    return String.valueOf(v);
  }

  /** Where two results differ, field by field for records. */
  private static String explain(Object expected, Object actual) {
    if (expected instanceof Optional<?> e && actual instanceof Optional<?> a && e.isPresent() && a.isPresent()) {
      return explain(e.get(), a.get());
    }
    if (expected instanceof BeginResult e && actual instanceof BeginResult a) {
      return (e.created() != a.created() ? "created: " + e.created() + " vs " + a.created() + "; " : "")
          + explain(e.record(), a.record());
    }
    if (expected instanceof OperationRecord e && actual instanceof OperationRecord a) {
      return "differs in: " + diff(e, a);
    }
    if (expected instanceof List<?> e && actual instanceof List<?> a) {
      List<?> ef = e.stream().allMatch(x -> x instanceof List<?>) ? flattenAny(e) : e;
      List<?> af = a.stream().allMatch(x -> x instanceof List<?>) ? flattenAny(a) : a;
      if (ef.size() != af.size()) {
        return "sizes differ: " + ef.size() + " vs " + af.size() + " (pages " + e.size() + " vs " + a.size()
            + "); identities expected " + ids(ef) + ", actual " + ids(af);
      }
      for (int i = 0; i < ef.size(); i++) {
        if (!Objects.equals(ef.get(i), af.get(i))) {
          return "first difference at index " + i + ": " + explain(ef.get(i), af.get(i));
        }
      }
      return "same elements, paged differently: " + e.size() + " vs " + a.size() + " pages";
    }
    return "";
  }

  private static List<?> flattenAny(List<?> pages) {
    List<Object> all = new ArrayList<>();
    pages.forEach(p -> all.addAll((List<?>) p));
    return all;
  }

  private static List<String> ids(List<?> records) {
    List<String> ids = new ArrayList<>();
    for (Object o : records) {
      ids.add(o instanceof OperationRecord r ? r.id().toString() : String.valueOf(o));
    }
    return ids;
  }

  private static String diff(OperationRecord e, OperationRecord a) {
    List<String> d = new ArrayList<>();
    field(d, "id", e.id(), a.id());
    field(d, "reference", e.reference(), a.reference());
    field(d, "fingerprint", e.fingerprint(), a.fingerprint());
    field(d, "request", e.request(), a.request());
    field(d, "state", e.state(), a.state());
    field(d, "owner", e.owner(), a.owner());
    field(d, "generation", e.generation(), a.generation());
    field(d, "leaseExpiresAt", e.leaseExpiresAt(), a.leaseExpiresAt());
    field(d, "nextAttemptAt", e.nextAttemptAt(), a.nextAttemptAt());
    field(d, "createdAt", e.createdAt(), a.createdAt());
    field(d, "updatedAt", e.updatedAt(), a.updatedAt());
    field(d, "attempts", e.attempts(), a.attempts());
    field(d, "response", e.response(), a.response());
    field(d, "reason", e.reason(), a.reason());
    return d.isEmpty() ? "(nothing)" : String.join("; ", d);
  }

  private static void field(List<String> out, String name, Object e, Object a) {
    if (!Objects.equals(e, a)) {
      out.add(name + ": " + show(e) + " vs " + show(a));
    }
  }

  private static String quote(String s) {
    return s == null ? "null" : "\"" + s + "\"";
  }

  private static String shortQuote(String s) {
    return s == null || s.length() <= 60 ? quote(s) : "\"" + s.substring(0, 20) + "...\" (" + s.length() + " chars)";
  }

  /** A body as text when it is short UTF-8, else its length. */
  private static String body(byte[] b) {
    if (b.length <= 120) {
      try {
        return "\"" + UTF_8.newDecoder().decode(ByteBuffer.wrap(b)) + "\"";
      } catch (CharacterCodingException e) {
        // binary
      }
    }
    return "<" + b.length + " bytes>";
  }

  private static RequestSnapshot jsonRequest(String json, String trace) {
    return RequestSnapshot.builder("POST", URI.create("https://api.example.test/v1/orders"))
        .header("Content-Type", "application/json")
        .header("X-Trace", trace)
        .body(json.getBytes(UTF_8), "application/json")
        .build();
  }

  private static ResponseSnapshot response(int status, String json) {
    return new ResponseSnapshot(status, Map.of("Content-Type", List.of("application/json")), json.getBytes(UTF_8));
  }
}
