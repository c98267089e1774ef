package dev.idem.jdbc.bench;

import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * What the condition of {@code idem_operation_undelivered} costs a resumed operation's three
 * writes (its claim, its outcome with the attempt, its delivery), the SQLite journal's schema 5
 * against schema 4 (issue 28, P4). It journals N queued operations once, copies the journal, gives
 * one copy schema 4's index ({@code state IN ('SUCCEEDED', 'FAILED', 'UNCERTAIN')}, for which SQLite
 * builds a temporary B-tree each time a statement runs) and leaves the other as it is (three
 * comparisons), then, alternating, takes every operation of a fresh copy of each through the
 * journal's own claim ({@code claimAll}, a batch of 32 as a resume's lanes claim), transition
 * ({@code recordAttemptAndTransition}) and delivery ({@code recordOutcomesDelivered}, a batch of 32),
 * on one thread, with no disk sync ({@code syncToDisk(false)}): the SQL and the journal's own code,
 * not the disk. Each round runs the two in the other order. Prints the microseconds per
 * operation of each round and the median of each. A program, not a test:
 *
 * <pre>
 * mvn -B -q -pl persistence -am test-compile -Pbench-index
 * </pre>
 *
 * Properties: {@code bench.index.operations} (default 100,000), {@code bench.index.rounds}
 * (default 3).
 */
public final class UndeliveredIndexBenchmark {
  private static final int BATCH = 32;
  private static final String OWNER = "bench-owner";

  private UndeliveredIndexBenchmark() {
  }

  public static void main(String[] args) throws Exception {
    int n = Integer.getInteger("bench.index.operations", 100_000);
    int rounds = Integer.getInteger("bench.index.rounds", 3);
    Path base = Files.createTempDirectory("idem-index-bench");
    Path seed = base.resolve("seed");
    Ops ops = new Ops(28);
    try (JdbcJournal journal = JdbcJournal.embedded(seed).syncToDisk(false).open()) {
      for (int i = 0; i < n; i++) {
        NewOperation op = ops.newOp("{\"amount\":4200,\"currency\":\"EUR\",\"order\":\"ord_" + i + "\"}");
        journal.begin(new NewOperation(op.id(), null, op.fingerprint(), op.request(), op.createdAt(), true));
      }
    }
    Path schema4 = copy(seed, base.resolve("schema4-seed"));
    sql(schema4, "DROP INDEX idem_operation_undelivered",
        "CREATE INDEX idem_operation_undelivered ON idem_operation (scope, operation, op_key)"
            + " WHERE queued = 1 AND outcome_delivered_at IS NULL AND state IN ('SUCCEEDED', 'FAILED', 'UNCERTAIN')"
            + " AND quarantined_at IS NULL");
    System.out.printf(Locale.ROOT, "%,d queued operations; per operation: a claim and a delivery in batches of %d,"
        + " one transition; one thread, no disk sync%n", n, BATCH);
    List<double[]> with4 = new ArrayList<>();
    List<double[]> with5 = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      // Each round in the other order, so that neither copy always runs on a JVM the other warmed.
      if (r % 2 == 0) {
        with4.add(round(copy(schema4, base.resolve("schema4-" + r)), n));
        with5.add(round(copy(seed, base.resolve("schema5-" + r)), n));
      } else {
        with5.add(round(copy(seed, base.resolve("schema5-" + r)), n));
        with4.add(round(copy(schema4, base.resolve("schema4-" + r)), n));
      }
      System.out.printf(Locale.ROOT, "round %d: schema 4's index %.1f µs (CPU %.1f), schema 5's %.1f µs (CPU %.1f)%n",
          r, with4.get(r)[0], with4.get(r)[1], with5.get(r)[0], with5.get(r)[1]);
    }
    System.out.printf(Locale.ROOT, "RESULT schema4=%.1f schema5=%.1f cpuSchema4=%.1f cpuSchema5=%.1f (µs per"
        + " operation, wall and the measuring thread's CPU, medians of %d rounds)%n", median(with4, 0),
        median(with5, 0), median(with4, 1), median(with5, 1), rounds);
    System.out.flush();
    delete(base);
  }

  /**
   * Claims, finishes and marks delivered every operation of the journal in {@code dir}, then
   * deletes it (a copy is about 120 MB at 100,000 operations); µs per operation: wall, and the CPU
   * of this thread, which runs the journal's statements itself (it holds the store's lock alone).
   */
  private static double[] round(Path dir, int n) throws Exception {
    try {
      return measure(dir, n);
    } finally {
      delete(dir);
    }
  }

  private static double[] measure(Path dir, int n) throws Exception {
    Instant now = Ops.T0.plusSeconds(1);
    try (JdbcJournal journal = JdbcJournal.embedded(dir).syncToDisk(false).open()) {
      List<OperationRecord> all = new ArrayList<>(n);
      for (OperationRecord after = null; ; ) {
        List<OperationRecord> page = journal.findDue(now, OWNER, after, 1000);
        if (page.isEmpty()) {
          break; // only an empty page is the last: the JDBC journal ends a page early by its bytes
        }
        all.addAll(page);
        after = page.get(page.size() - 1);
      }
      if (all.size() != n) {
        throw new IllegalStateException("expected " + n + " due operations, found " + all.size());
      }
      java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
      long cpuStart = threads.getCurrentThreadCpuTime();
      long start = System.nanoTime();
      for (int i = 0; i < n; i += BATCH) {
        List<OperationRecord> batch = all.subList(i, Math.min(n, i + BATCH));
        List<Optional<Lease>> leases = journal.claimAll(batch, OWNER, now, Duration.ofMinutes(5));
        List<dev.idem.core.OperationId> done = new ArrayList<>(batch.size());
        for (int k = 0; k < batch.size(); k++) {
          Lease lease = leases.get(k).orElseThrow(() -> new IllegalStateException("not claimed"));
          OperationRecord r = batch.get(k);
          journal.recordAttemptAndTransition(r.id(), lease, Ops.attempt(1, lease.generation(), now),
              Transition.finish(OperationState.SUCCEEDED, now, Ops.ok("{\"id\":\"ord_1\"}"), null));
          done.add(r.id());
        }
        if (journal.recordOutcomesDelivered(done, now) != done.size()) {
          throw new IllegalStateException("a delivery was not recorded");
        }
      }
      journal.flush();
      return new double[] {(System.nanoTime() - start) / 1e3 / n,
          (threads.getCurrentThreadCpuTime() - cpuStart) / 1e3 / n};
    }
  }

  private static void delete(Path dir) throws java.io.IOException {
    try (var files = Files.walk(dir)) {
      for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(f);
      }
    }
  }

  private static Path copy(Path journalDir, Path to) throws Exception {
    Files.createDirectories(to);
    try (var files = Files.list(journalDir)) {
      for (Path f : files.toList()) {
        if (!f.getFileName().toString().endsWith(".lock")) {
          Files.copy(f, to.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
    return to;
  }

  private static void sql(Path journalDir, String... statements) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + journalDir.resolve("idem-journal.db"));
        Statement st = c.createStatement()) {
      for (String s : statements) {
        st.execute(s);
      }
    }
  }

  private static double median(List<double[]> values, int field) {
    double[] sorted = values.stream().mapToDouble(v -> v[field]).sorted().toArray();
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }
}
