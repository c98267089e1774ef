package dev.idem.jdbc.bench;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.Fingerprint;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.Lease;
import dev.idem.core.NewOperation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.RequestSnapshot;
import dev.idem.core.ResponseSnapshot;
import dev.idem.core.Transition;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * Measures what the H2 journal costs per operation on this machine, and one fsync on the same disk
 * in the same run. A program, not a test. Run it with:
 *
 * <pre>
 * mvn -B -q -pl persistence -am test-compile -Pbench
 * </pre>
 *
 * (the {@code bench} profile of persistence/pom.xml runs this class with exec:java on the test
 * classpath; pass {@code -Dbench.ops=N} for more or fewer operations and {@code -Dbench.dir=PATH}
 * to measure another disk).
 *
 * <p>One operation is what the executor writes for a request that succeeds at once: begin (the one
 * synchronous durable write), claim, one attempt record and the SUCCEEDED transition with a small
 * response. Runs single-threaded and with 32 threads, with {@code syncToDisk} on (the default: the
 * journal's write-ahead log is fdatasync'ed once per group commit) and off (the log is written to
 * the OS only: survives kill -9, not power loss). Each timed batch ends with {@code flush()}, so
 * every write it made is durable. The journal's applier writes the logged rows to H2 in the
 * background, in parallel with the batches and competing with them for the cores; the time to
 * apply what is left at the end (the journal's close) is printed too, so no work goes uncounted.
 *
 * <p>Goals: single-threaded cost at most 1.5 fsyncs per operation; 32 threads at least 5x the
 * single-threaded throughput. Each configuration alternates slices of fsync, single-threaded and
 * 32-thread measurements ({@code -Dbench.slices=N}, default 20, so a slice lasts about a second)
 * and reports the median of the per-slice ratios, so that both sides of a ratio see the same
 * machine load.
 *
 * <p>History. Before the write-ahead log, every begin committed H2 (WRITE_DELAY=0 plus an fdatasync
 * of its file): 7.7 fsyncs per operation on one thread and 1.9x with 32 threads, because each H2
 * commit serializes a copy-on-write chunk of 26 to 35 KB (57% of the CPU samples in
 * {@code MVStore.store}, one commit at a time). Several H2 connections did not help (2.0x to 2.2x
 * with 4 or 8), and broke the kill tests' promise that the next begin makes a completion durable.
 * With the log, the remaining costs on this 2-core machine are the log's fdatasync itself (about
 * 1.0x to 1.4x the 256-byte fsync, more while H2 writes in the background, and about 100 us of the
 * caller's CPU in the kernel), 30 to 45 us of CPU per operation on the calling thread (JSON of the
 * request, attempt and response), and 50 to 100 us per operation in the applier (mostly H2
 * rewriting the primary-key leaves that random keys dirty). With 32 threads both cores are busy,
 * so throughput is bounded by CPU per operation, and every operation's thread sleeps once for its
 * fdatasync and is woken.
 */
public final class JournalBenchmark {
  private static final byte[] BODY = "{\"amount\":1999,\"currency\":\"EUR\",\"customer\":\"cus_123\"}"
      .getBytes(StandardCharsets.UTF_8);
  private static final Fingerprint FP = new Fingerprint("a".repeat(64));

  private JournalBenchmark() {
  }

  public static void main(String[] args) throws Exception {
    int ops = Integer.getInteger("bench.ops", 10000);
    int slices = Integer.getInteger("bench.slices", 20);
    Path base = Path.of(System.getProperty("bench.dir", "target/bench"));
    Files.createDirectories(base);
    Path run = Files.createTempDirectory(base.toAbsolutePath(), "run-");
    try {
      System.out.printf(Locale.ROOT, "Idem H2 journal benchmark: %d operations single-threaded and %d with 32 threads"
          + " per configuration, in %d interleaved slices; %d cores; %s; load average %s%n", ops, ops * 2, slices,
          Runtime.getRuntime().availableProcessors(), run, loadAverage());
      // Warm the JIT on a throwaway journal, one thread and 32, so that the first measured
      // configuration is not the cold one: on 2 cores C2 takes seconds to compile H2, Jackson and
      // the journal, and until then it competes with what is measured.
      try (JdbcJournal warm = JdbcJournal.h2(run.resolve("warm-up")).syncToDisk(false).open()) {
        Random random = new Random(2);
        for (int i = 0; i < 3; i++) {
          timeOps(warm, random, 1, Math.min(ops, 4000));
          timeOps(warm, random, 32, Math.min(ops, 4000));
        }
      }
      for (boolean sync : new boolean[] {true, false}) {
        report(sync ? "syncToDisk=true (default)" : "syncToDisk=false",
            measure(run.resolve("journal-" + sync), run.resolve("fsync-" + sync + ".bin"), sync, ops, slices));
      }
      System.out.printf(Locale.ROOT, "load average at the end: %s%n", loadAverage());
    } finally {
      deleteTree(run);
    }
  }

  /** Per-slice results of one configuration. */
  record Slices(double[] fsyncMicros, double[] singleMicrosPerOp, double[] multiOpsPerSecond, double closeMillis,
      int totalOps, long databaseBytes, long logBytes) {
  }

  /**
   * Runs {@code slices} rounds of: an fsync measurement, {@code ops / slices} operations on one
   * thread, {@code 2 * ops / slices} operations on 32 threads. Interleaving puts each ratio's two
   * sides under the same conditions: on a shared machine the load, and the fsync with it, drift by
   * several times within a minute, and a ratio of figures measured a minute apart says little.
   */
  static Slices measure(Path dir, Path fsyncFile, boolean sync, int ops, int slices) throws Exception {
    double[] fsync = new double[slices];
    double[] single = new double[slices];
    double[] multi = new double[slices];
    double closeMillis;
    int n = Math.max(1, ops / slices);
    JdbcJournal journal = JdbcJournal.h2(dir).syncToDisk(sync).open();
    try {
      Random random = new Random(1);
      timeOps(journal, random, 1, Math.min(500, ops / 4)); // warm-up
      for (int i = 0; i < slices; i++) {
        fsync[i] = fsyncMicros(fsyncFile, 50);
        single[i] = timeOps(journal, random, 1, n) / 1000.0 / n;
        multi[i] = 2 * n / (timeOps(journal, random, 32, 2 * n) / 1e9);
      }
    } finally {
      long t0 = System.nanoTime();
      journal.close(); // applies what the applier has not yet written to H2, then syncs H2
      closeMillis = (System.nanoTime() - t0) / 1e6;
    }
    return new Slices(fsync, single, multi, closeMillis, slices * 3 * n,
        Files.size(dir.resolve("idem-journal.mv.db")), Files.size(dir.resolve("idem-journal.wal")));
  }

  private static void report(String label, Slices s) {
    int n = s.fsyncMicros().length;
    double[] costRatio = new double[n];
    double[] scaling = new double[n];
    for (int i = 0; i < n; i++) {
      costRatio[i] = s.singleMicrosPerOp()[i] / s.fsyncMicros()[i];
      scaling[i] = s.multiOpsPerSecond()[i] / (1e6 / s.singleMicrosPerOp()[i]);
    }
    double single = median(s.singleMicrosPerOp());
    double multi = median(s.multiOpsPerSecond());
    System.out.printf(Locale.ROOT, "%s: fsync of a 256-byte write (FileChannel.write + force(true)): median %.1f us"
        + " (slices %s)%n", label, median(s.fsyncMicros()), list(s.fsyncMicros(), "%.0f"));
    System.out.printf(Locale.ROOT, "%s, 1 thread:   median %7.1f us/op = %6.0f ops/s (slices %s)%n", label, single,
        1e6 / single, list(s.singleMicrosPerOp(), "%.0f"));
    System.out.printf(Locale.ROOT, "%s, 32 threads: median %7.0f ops/s = %6.1f us/op wall (slices %s)%n", label,
        multi, 1e6 / multi, list(s.multiOpsPerSecond(), "%.0f"));
    System.out.printf(Locale.ROOT, "%s: close after %d operations (applies the rows not yet in H2, syncs it): %.0f ms"
        + " = %.1f us per operation measured; files: H2 %.1f MB, log %.1f MB%n", label, s.totalOps(),
        s.closeMillis(), s.closeMillis() * 1000 / s.totalOps(), s.databaseBytes() / 1e6, s.logBytes() / 1e6);
    System.out.printf(Locale.ROOT, "%s: RATIOS (median of per-slice ratios) single-threaded begin+complete = %.2f x"
        + " one fsync (goal <= 1.5) [slices %s]; 32 threads = %.2f x single-threaded throughput (goal >= 5)"
        + " [slices %s]%n", label, median(costRatio), list(costRatio, "%.2f"), median(scaling),
        list(scaling, "%.2f"));
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  private static String list(double[] values, String format) {
    StringBuilder b = new StringBuilder();
    for (double d : values) {
      b.append(b.length() == 0 ? "" : " ").append(String.format(Locale.ROOT, format, d));
    }
    return b.toString();
  }

  private static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).strip();
    } catch (Exception e) {
      return "unknown";
    }
  }

  static double fsyncMicros(Path file, int n) throws Exception {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(256);
      for (int i = 0; i < 10; i++) { // the file exists and its blocks are allocated
        b.clear();
        ch.write(b, (long) (i % 16) * 256);
        ch.force(true);
      }
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        b.clear();
        ch.write(b, (long) (i % 16) * 256);
        ch.force(true);
      }
      return (System.nanoTime() - t0) / 1000.0 / n;
    }
  }

  /**
   * Runs {@code ops} operations on {@code threads} threads, then flushes (every write durable);
   * returns the nanoseconds taken.
   */
  private static long timeOps(JdbcJournal journal, Random random, int threads, int ops) throws Exception {
    List<IdempotencyKey> keys = new ArrayList<>(ops);
    for (int i = 0; i < ops; i++) {
      keys.add(IdempotencyKey.generate(random));
    }
    long t0 = System.nanoTime();
    AtomicInteger next = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(threads);
    List<Throwable> failures = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w = new Thread(() -> {
        try {
          for (int i = next.getAndIncrement(); i < ops; i = next.getAndIncrement()) {
            one(journal, keys.get(i));
          }
        } catch (Throwable e) {
          synchronized (failures) {
            failures.add(e);
          }
        } finally {
          done.countDown();
        }
      });
      w.start();
    }
    done.await();
    if (!failures.isEmpty()) {
      throw new IllegalStateException("benchmark operation failed", failures.get(0));
    }
    journal.flush();
    return System.nanoTime() - t0;
  }

  private static void one(JdbcJournal journal, IdempotencyKey key) throws Exception {
    Instant now = Instant.now();
    OperationId id = new OperationId("bench", "create-order", key);
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example.test/v1/orders"))
        .header("content-type", "application/json").body(BODY, "application/json").build();
    journal.begin(new NewOperation(id, null, FP, request, now));
    Lease lease = journal.claim(id, "bench", now, Duration.ofMinutes(2)).orElseThrow();
    journal.recordAttempt(id, lease, new AttemptRecord(1, lease.generation(), now, now, Classification.SUCCESS, 201,
        null, "2xx", Duration.ZERO, "done"));
    journal.transition(id, lease, Transition.finish(OperationState.SUCCEEDED, now,
        new ResponseSnapshot(201, Map.of("content-type", List.of("application/json")), BODY), null));
  }

  private static void deleteTree(Path dir) throws Exception {
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
