package dev.idem.bench;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The in-memory journal's CPU per successful operation, as the executor drives it (begin and claim,
 * then the attempt and the move to SUCCEEDED in one call), on one thread, against a floor measured
 * in the same run: a {@link ConcurrentHashMap} that inserts each new identity and, once it holds as
 * many as the full journal, removes the oldest. That is the least a bounded table of operations
 * does per call; what the journal adds to it is its records, its indexes and its drop order.
 *
 * <p>Rows: the default journal ({@link InMemoryJournal#DEFAULT_MAX_FINISHED_BYTES}), filled before
 * it is measured, so that every operation drops the oldest as in a long-running process; the
 * journal keeping none (each operation dropped as it finishes); the floor, holding as many
 * identities as the full default journal. Every row makes the same identities (a generated key
 * each), so that cost is in all three.
 *
 * <p>Run by {@code mvn -B -q -pl benchmarks -am test-compile -Pbench-journal}; system properties:
 * {@code idem.bench.journal.rounds} (9 measured rounds, the rows alternated),
 * {@code idem.bench.journal.warmupRounds} (3), {@code idem.bench.journal.millis} (2000 per row and
 * round). The calling thread's CPU time is the figure, which a loaded machine moves less than wall
 * time.
 */
public final class InMemoryJournalBenchmark {
  private static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");
  private static final RequestSnapshot REQUEST = RequestSnapshot.builder("POST",
      URI.create("http://127.0.0.1:8080/orders")).header("Content-Type", "application/json")
      .body(Strategies.BODY, "application/json").build();
  private static final ResponseSnapshot RESPONSE = new ResponseSnapshot(201,
      Map.of("content-type", List.of("application/json")),
      "{\"id\":\"ord_1\",\"status\":\"created\"}".getBytes(StandardCharsets.UTF_8));
  private static final Fingerprint FINGERPRINT = new Fingerprint("0".repeat(64));

  private InMemoryJournalBenchmark() {
  }

  /**
   * Runs the rounds and prints each row's median and its ratio to the floor.
   *
   * @param args none
   * @throws Exception if the journal refuses a call
   */
  public static void main(String[] args) throws Exception {
    int rounds = Integer.getInteger("idem.bench.journal.rounds", 9);
    int warmupRounds = Integer.getInteger("idem.bench.journal.warmupRounds", 3);
    long millis = Long.getLong("idem.bench.journal.millis", 2000);
    System.out.printf(Locale.ROOT, "In-memory journal benchmark: %d rounds (after %d of warm-up) x %d ms per row;"
        + " load average at start: %s%n", rounds, warmupRounds, millis, Stats.loadAverage());
    double[] full = new double[rounds];
    double[] none = new double[rounds];
    double[] floor = new double[rounds];
    int held = 0;
    for (int r = -warmupRounds; r < rounds; r++) {
      InMemoryJournal fullJournal = new InMemoryJournal();
      held = fill(fullJournal);
      InMemoryJournal keepingNone = new InMemoryJournal(0);
      double a = cpuMicrosPerStep(() -> operation(fullJournal), millis);
      double b = cpuMicrosPerStep(() -> operation(keepingNone), millis);
      double c = floor(held, millis);
      if (r >= 0) {
        full[r] = a;
        none[r] = b;
        floor[r] = c;
        System.out.printf(Locale.ROOT, "round %d: full default journal %.3f µs, keeping none %.3f µs, floor %.3f µs"
            + " of CPU per operation%n", r, a, b, c);
      }
    }
    double[] fullRatio = new double[rounds];
    double[] noneRatio = new double[rounds];
    for (int r = 0; r < rounds; r++) {
      fullRatio[r] = full[r] / floor[r];
      noneRatio[r] = none[r] / floor[r];
    }
    System.out.printf(Locale.ROOT, "RESULT CPU per operation (medians): full default journal (%,d operations held)"
            + " %.3f µs, keeping none %.3f µs, floor (a map of %,d identities) %.3f µs; ÷ the floor (median of"
            + " per-round ratios): %.2f and %.2f; load average at end: %s%n", held, Stats.median(full),
        Stats.median(none), held, Stats.median(floor), Stats.median(fullRatio), Stats.median(noneRatio),
        Stats.loadAverage());
  }

  /** Finishes operations until the journal starts dropping; returns how many it then holds. */
  private static int fill(InMemoryJournal journal) throws Exception {
    int n = 0;
    OperationId first = null;
    while (true) {
      OperationId id = operation(journal);
      if (first == null) {
        first = id;
      }
      n++;
      if (journal.find(first).isEmpty()) {
        return n - 1;
      }
    }
  }

  /** One step of a row, repeated for the row's time. */
  private interface Step {
    void run() throws Exception;
  }

  /** The calling thread's CPU µs per step, over {@code millis} of repeating it. */
  private static double cpuMicrosPerStep(Step step, long millis) throws Exception {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    long end = System.nanoTime() + millis * 1_000_000L;
    long n = 0;
    long cpu = mx.getCurrentThreadCpuTime();
    while (System.nanoTime() < end) {
      for (int i = 0; i < 100; i++) {
        step.run();
      }
      n += 100;
    }
    return (mx.getCurrentThreadCpuTime() - cpu) / 1_000.0 / n;
  }

  /** One operation as the executor's success path drives it: begin and claim, attempt and finish. */
  private static OperationId operation(InMemoryJournal journal) throws Exception {
    OperationId id = new OperationId("default", "create-order", IdempotencyKey.generate());
    BeginResult begun = journal.beginAndClaim(new NewOperation(id, null, FINGERPRINT, REQUEST, T0), "bench",
        Duration.ofMinutes(1));
    AttemptRecord attempt = new AttemptRecord(1, begun.lease().generation(), T0, T0, Classification.SUCCESS, 201,
        null, "201", Duration.ZERO, "succeeded");
    journal.recordAttemptAndTransition(id, begun.lease(), attempt,
        Transition.finish(OperationState.SUCCEEDED, T0, RESPONSE, "201"));
    return id;
  }

  /** The map row: the same identities, inserted, and the oldest removed once {@code held} are in. */
  private static double floor(int held, long millis) throws Exception {
    ConcurrentHashMap<OperationId, Object> map = new ConcurrentHashMap<>();
    ArrayDeque<OperationId> oldest = new ArrayDeque<>(held + 1);
    for (int i = 0; i < held; i++) {
      OperationId id = new OperationId("default", "create-order", IdempotencyKey.generate());
      map.put(id, Boolean.TRUE);
      oldest.add(id);
    }
    return cpuMicrosPerStep(() -> {
      OperationId id = new OperationId("default", "create-order", IdempotencyKey.generate());
      map.put(id, Boolean.TRUE);
      oldest.add(id);
      map.remove(oldest.poll());
    }, millis);
  }
}
