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
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
 * classpath; it takes five to six minutes). Properties: {@code -Dbench.slices=N} (default 10),
 * {@code -Dbench.sliceMillis=N} (default 2000), {@code -Dbench.leadInMillis=N} (default 1000),
 * {@code -Dbench.maxWarmUpSeconds=N} (default 120),
 * {@code -Dbench.dir=PATH} to measure another disk.
 *
 * <p>One operation is what the executor writes for a request that succeeds at once: begin (the one
 * synchronous durable write), claim, one attempt record and the SUCCEEDED transition with a small
 * response. Runs single-threaded and with 32 threads, with {@code syncToDisk} on (the default: the
 * journal's write-ahead log is fdatasync'ed once per group commit) and off (the log is written to
 * the OS only: survives kill -9, not power loss).
 *
 * <p>Method. First a warm-up until the JIT compilers are done (see {@link #warmUp}). Then, per
 * configuration, slices of: one fsync measurement, a single-threaded part and a 32-thread part.
 * Each part runs operations for a lead-in (untimed, so that the applier's backlog reaches its steady
 * state), then for the slice's time, and ends with {@code flush()}, so every write it made is
 * durable. The journal's applier writes the logged rows to H2 in the background, about every
 * thousand operations (at least once a second), during the parts, competing with them for the
 * cores as it does in an app. Between parts, untimed, the rows the applier has not yet written
 * are written and the part's rows are purged; both are printed per operation, so no work goes
 * unreported, and no part pays for another's rows or measures a bigger database than the one
 * before. The ratios are medians of per-slice ratios, so that both sides of a ratio see the same
 * machine load.
 *
 * <p>Goals: single-threaded cost at most 1.5 fsyncs per operation; 32 threads at least 5x the
 * single-threaded throughput.
 *
 * <p>History. Before the write-ahead log, every begin committed H2 (WRITE_DELAY=0 plus an fdatasync
 * of its file): 7.7 fsyncs per operation on one thread and 1.9x with 32 threads, because each H2
 * commit serializes a copy-on-write chunk of 26 to 35 KB (57% of the CPU samples in
 * {@code MVStore.store}, one commit at a time). Several H2 connections did not help (2.0x to 2.2x
 * with 4 or 8), and broke the kill tests' promise that the next begin makes a completion durable.
 * With the log, a single thread spends about one fdatasync per operation (the log's, shared with
 * the previous operation's deferred writes) plus 40 to 80 us of CPU in user mode; the applier's H2
 * writes run on the other core. With 32 threads both cores are busy: the calling threads (JSON,
 * and the fdatasync's kernel time) and the applier, H2's single writer (adding each row to its
 * table and indexes, and storing pages). With random UUIDv4 keys the applier's work was 60 to 75
 * us per operation, and the writers waited for it; UUIDv7 keys, which H2's index takes at its end,
 * about halved that. The 32-thread figure with syncToDisk off, where no thread waits for the
 * disk, shows the CPU bound.
 *
 * <p>An earlier version of this benchmark ran 500- and 1000-operation batches right after JVM
 * start: C2 was compiling for the whole run (about one core's worth), and the 32-thread batches
 * ended before the applier's next pass, so its work fell into the single-threaded batches. Both
 * skewed the ratios; this one measures steady state.
 */
public final class JournalBenchmark {
  private static final byte[] BODY = "{\"amount\":1999,\"currency\":\"EUR\",\"customer\":\"cus_123\"}"
      .getBytes(StandardCharsets.UTF_8);
  private static final Fingerprint FP = new Fingerprint("a".repeat(64));
  /**
   * Seeds for the worker threads' Randoms: keys are UUIDv7 with the system clock, as
   * {@link IdempotencyKey#generate()} makes them, but need no SecureRandom here.
   */
  private static final AtomicLong SEEDS = new AtomicLong();

  private JournalBenchmark() {
  }

  public static void main(String[] args) throws Exception {
    int slices = Integer.getInteger("bench.slices", 10);
    long sliceNanos = Duration.ofMillis(Long.getLong("bench.sliceMillis", 2000)).toNanos();
    long leadInNanos = Duration.ofMillis(Long.getLong("bench.leadInMillis", 1000)).toNanos();
    Duration maxWarmUp = Duration.ofSeconds(Long.getLong("bench.maxWarmUpSeconds", 120));
    Path base = Path.of(System.getProperty("bench.dir", "target/bench"));
    Files.createDirectories(base);
    Path run = Files.createTempDirectory(base.toAbsolutePath(), "run-");
    try {
      System.out.printf(Locale.ROOT, "Idem H2 journal benchmark: %d interleaved slices of %d ms per part and"
          + " configuration, each after a lead-in of %d ms; %d cores; %s; load average %s%n", slices,
          sliceNanos / 1_000_000, leadInNanos / 1_000_000, Runtime.getRuntime().availableProcessors(), run,
          loadAverage());
      warmUp(run, maxWarmUp);
      for (boolean sync : new boolean[] {true, false}) {
        report(sync ? "syncToDisk=true (default)" : "syncToDisk=false",
            measure(run.resolve("journal-" + sync), run.resolve("fsync-" + sync + ".bin"), sync, slices, leadInNanos,
                sliceNanos));
      }
      System.out.printf(Locale.ROOT, "load average at the end: %s%n", loadAverage());
    } finally {
      deleteTree(run);
    }
  }

  /**
   * Runs both configurations, one thread and 32, until the JIT compilers are done: until a round
   * spends under 5% of its time compiling, or {@code max} has passed. On 2 cores C2 compiles H2,
   * Jackson and the journal for 20 to 40 seconds, using about one core the whole time; figures taken
   * meanwhile measure the compiler. An app that runs for hours sees the compiled code.
   */
  private static void warmUp(Path run, Duration max) throws Exception {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    long start = System.nanoTime();
    double share = 1;
    int rounds = 0;
    try (JdbcJournal on = JdbcJournal.embedded(run.resolve("warm-up-on")).open();
        JdbcJournal off = JdbcJournal.embedded(run.resolve("warm-up-off")).syncToDisk(false).open()) {
      while (rounds < 3 || share >= 0.05 && System.nanoTime() - start < max.toNanos()) {
        long compiling = jit.getTotalCompilationTime();
        long t0 = System.nanoTime();
        for (JdbcJournal journal : List.of(on, off)) {
          part(journal, 1, 0, TimeUnit.MILLISECONDS.toNanos(300));
          part(journal, 32, 0, TimeUnit.MILLISECONDS.toNanos(300));
        }
        share = (jit.getTotalCompilationTime() - compiling) * 1e6 / (System.nanoTime() - t0);
        rounds++;
      }
    }
    System.out.printf(Locale.ROOT, "warm-up: %d rounds, %.1f s; the JIT compiled %.0f%% of the last round's time%s%n",
        rounds, (System.nanoTime() - start) / 1e9, share * 100, share >= 0.05 ? " (NOT SETTLED: the figures"
        + " below include compiling)" : "");
  }

  /** Per-slice results of one configuration. */
  record Slices(double[] fsyncMicros, Part[] single, Part[] multi, double closeMillis, long databaseBytes,
      long logBytes, long compileMillis) {
  }

  /**
   * One timed part of a slice: operations, the nanoseconds they took (ending with every write
   * durable), and, untimed, the nanoseconds then taken to write to H2 what the journal's applier
   * had not yet written, and to purge the part's rows.
   */
  record Part(long ops, long nanos, long leftNanos, long purgeNanos) {
    double microsPerOp() {
      return nanos / 1000.0 / ops;
    }

    double opsPerSecond() {
      return ops * 1e9 / nanos;
    }
  }

  /**
   * Runs {@code slices} rounds of: an fsync measurement, one thread, 32 threads. Each part runs
   * for {@code sliceNanos} and starts with nothing left for H2 from the part before (the rest is
   * written untimed, and reported), so that no part pays for another's rows. The applier runs
   * about every thousand operations, during the parts, competing with them for the cores as it
   * would in an app. After each part its rows are purged (untimed, reported), as retention does in
   * an app: without that, the sustained runs grew H2's file to 2 to 4 GB and every later slice
   * measured a bigger database than the one before. Interleaving puts each ratio's two sides under
   * the same conditions: on a shared machine the load, and the fsync with it, drift by several
   * times within a minute.
   */
  static Slices measure(Path dir, Path fsyncFile, boolean sync, int slices, long leadInNanos, long sliceNanos)
      throws Exception {
    double[] fsync = new double[slices];
    Part[] single = new Part[slices];
    Part[] multi = new Part[slices];
    double closeMillis;
    long compiling = ManagementFactory.getCompilationMXBean().getTotalCompilationTime();
    JdbcJournal journal = JdbcJournal.embedded(dir).syncToDisk(sync).open();
    try {
      part(journal, 1, 0, TimeUnit.MILLISECONDS.toNanos(200));
      for (int i = 0; i < slices; i++) {
        fsync[i] = fsyncMicros(fsyncFile, 50);
        single[i] = part(journal, 1, leadInNanos, sliceNanos);
        multi[i] = part(journal, 32, leadInNanos, sliceNanos);
      }
    } finally {
      long t0 = System.nanoTime();
      journal.close(); // syncs H2 and empties the log
      closeMillis = (System.nanoTime() - t0) / 1e6;
    }
    return new Slices(fsync, single, multi, closeMillis, Files.size(dir.resolve("idem-journal.mv.db")),
        Files.size(dir.resolve("idem-journal.wal")),
        ManagementFactory.getCompilationMXBean().getTotalCompilationTime() - compiling);
  }

  private static Part part(JdbcJournal journal, int threads, long leadInNanos, long nanos) throws Exception {
    long[] timed = timeOps(journal, threads, leadInNanos, nanos);
    long left = drain(journal);
    long t0 = System.nanoTime();
    journal.purge(Instant.now().plusSeconds(1));
    return new Part(timed[0], timed[1], left, System.nanoTime() - t0);
  }

  /**
   * Writes to H2 every row the applier has not yet written, and returns the nanoseconds that took:
   * a scan does that first, so that it sees every row.
   */
  private static long drain(JdbcJournal journal) throws Exception {
    long t0 = System.nanoTime();
    journal.findByState(OperationState.PENDING, null, 1);
    return System.nanoTime() - t0;
  }

  private static void report(String label, Slices s) {
    int n = s.fsyncMicros().length;
    double[] single = new double[n];
    double[] multi = new double[n];
    double[] costRatio = new double[n];
    double[] scaling = new double[n];
    long ops = 0;
    long leftNanos = 0;
    long purgeNanos = 0;
    for (int i = 0; i < n; i++) {
      single[i] = s.single()[i].microsPerOp();
      multi[i] = s.multi()[i].opsPerSecond();
      costRatio[i] = single[i] / s.fsyncMicros()[i];
      scaling[i] = multi[i] / s.single()[i].opsPerSecond();
      ops += s.single()[i].ops() + s.multi()[i].ops();
      leftNanos += s.single()[i].leftNanos() + s.multi()[i].leftNanos();
      purgeNanos += s.single()[i].purgeNanos() + s.multi()[i].purgeNanos();
    }
    System.out.printf(Locale.ROOT, "%s: fsync of a 256-byte write (FileChannel.write + force(true)): median %.1f us"
        + " (slices %s)%n", label, median(s.fsyncMicros()), list(s.fsyncMicros(), "%.0f"));
    System.out.printf(Locale.ROOT, "%s, 1 thread:   median %7.1f us/op = %6.0f ops/s (slices %s)%n", label,
        median(single), 1e6 / median(single), list(single, "%.0f"));
    System.out.printf(Locale.ROOT, "%s, 32 threads: median %7.0f ops/s = %6.1f us/op wall (slices %s)%n", label,
        median(multi), 1e6 / median(multi), list(multi, "%.0f"));
    System.out.printf(Locale.ROOT, "%s: %d operations; rows left for H2 at the end of a part, written untimed:"
        + " %.1f us per operation; purging them, untimed: %.1f us per operation; close: %.0f ms; the JIT"
        + " compiled %.1f s during the measurement; files: H2 %.1f MB, log %.1f MB%n", label, ops,
        leftNanos / 1000.0 / ops, purgeNanos / 1000.0 / ops, s.closeMillis(), s.compileMillis() / 1000.0,
        s.databaseBytes() / 1e6, s.logBytes() / 1e6);
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
   * Runs operations on {@code threads} threads for {@code leadInNanos} untimed, then for
   * {@code nanos} timed, then flushes (every write durable); returns the operations run in the timed
   * window and the nanoseconds from its start to the end of the flush.
   *
   * <p>Why the lead-in: writers may run ahead of the applier by up to the journal's backlog limit
   * (some 12,000 operations), and each part starts with nothing for H2. Without a lead-in, a
   * 32-thread part first ran with no backlog to wait for, and left 23 us per operation of H2 work
   * (of about 35) to the untimed drain after it. After a lead-in the window starts with the
   * backlog it ends with, so it pays for as much applier work as it makes.
   */
  private static long[] timeOps(JdbcJournal journal, int threads, long leadInNanos, long nanos) throws Exception {
    long t0 = System.nanoTime() + leadInNanos;
    long end = t0 + nanos;
    AtomicLong ops = new AtomicLong();
    CountDownLatch done = new CountDownLatch(threads);
    List<Throwable> failures = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Random random = new Random(SEEDS.incrementAndGet());
      Thread w = new Thread(() -> {
        try {
          while (System.nanoTime() < end) {
            one(journal, IdempotencyKey.generate(random, Clock.systemUTC()));
            ops.incrementAndGet();
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
    long before = 0;
    if (leadInNanos > 0) {
      TimeUnit.NANOSECONDS.sleep(t0 - System.nanoTime());
      before = ops.get();
      t0 = System.nanoTime(); // the sleep may end late; the window starts when the count is taken
    }
    done.await();
    if (!failures.isEmpty()) {
      throw new IllegalStateException("benchmark operation failed", failures.get(0));
    }
    journal.flush();
    return new long[] {ops.get() - before, System.nanoTime() - t0};
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
