package dev.idem.jdbc.bench;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * What the embedded (SQLite) journal costs on this machine, against one fsync of 256 bytes on the
 * same disk, measured in the same run. A program, not a test:
 *
 * <pre>
 * mvn -B -q -pl persistence -am test-compile -Pbench
 * </pre>
 *
 * Properties: {@code -Dbench.slices=N} (default 8), {@code -Dbench.sliceMillis=N} (default 2000),
 * {@code -Dbench.bulkOperations=N} (default 1,000,000; 0 skips the file-size part),
 * {@code -Dbench.dir=PATH} to measure another disk.
 *
 * <p>It prints, as medians of per-slice ratios (so both sides of a ratio saw the same load):
 * <ul>
 *   <li>begin on one thread, divided by one fsync (goal at most 1.5): begin is the one durable
 *       write before the first send;</li>
 *   <li>durable operations (begins) per second on 32 threads divided by one thread (goal at least
 *       5): concurrent begins share commits;</li>
 *   <li>what bounds that ratio: the process's CPU time per begin with 32 threads; on N cores, 32
 *       threads cannot exceed N × (1-thread time per begin) ÷ that, however commits are shared;</li>
 *   <li>for information, whole operations per second on one and 32 threads: what the executor
 *       writes for a request that succeeds at once (begin, claim, one attempt and the SUCCEEDED
 *       transition);</li>
 *   <li>the database's size after a million operations, after purging them, and how long an open
 *       (which runs SQLite's integrity_check) takes at that size.</li>
 * </ul>
 * Each slice measures the fsync, then one thread, then 32, each part for the slice's time; every
 * part ends with a flush (all its writes durable) and purges its rows, untimed, so that each part
 * sees the same small database.
 */
public final class JournalBenchmark {
  private static final byte[] BODY = "{\"amount\":1999,\"currency\":\"EUR\",\"customer\":\"cus_123\"}"
      .getBytes(StandardCharsets.UTF_8);
  private static final Fingerprint FP = new Fingerprint("a".repeat(64));
  private static final RequestSnapshot REQUEST = RequestSnapshot.builder("POST",
      URI.create("https://api.example.test/v1/orders")).header("Content-Type", "application/json")
      .body(BODY, "application/json").build();
  private static final ResponseSnapshot RESPONSE = new ResponseSnapshot(201,
      Map.of("Content-Type", List.of("application/json")), "{\"id\":\"ord_1\"}".getBytes(StandardCharsets.UTF_8));
  private static final Instant FAR_FUTURE = Instant.parse("2200-01-01T00:00:00Z");
  private static final AtomicLong SEEDS = new AtomicLong();
  private static final int CORES = Runtime.getRuntime().availableProcessors();
  private static final com.sun.management.OperatingSystemMXBean OS =
      (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();

  private JournalBenchmark() {
  }

  public static void main(String[] args) throws Exception {
    int slices = Integer.getInteger("bench.slices", 8);
    long sliceNanos = Duration.ofMillis(Long.getLong("bench.sliceMillis", 2000)).toNanos();
    long bulk = Long.getLong("bench.bulkOperations", 1_000_000);
    Path base = Files.createDirectories(Path.of(System.getProperty("bench.dir", "target/bench")));
    Path run = Files.createTempDirectory(base.toAbsolutePath(), "run-");
    System.out.printf(Locale.ROOT, "Idem SQLite journal benchmark: %d slices of %d ms per part; %d cores; %s;"
        + " load average %s%n", slices, sliceNanos / 1_000_000, Runtime.getRuntime().availableProcessors(), run,
        loadAverage());
    try (JdbcJournal journal = JdbcJournal.openEmbedded(run.resolve("journal"))) {
      long warmUpEnd = System.nanoTime() + Duration.ofSeconds(15).toNanos();
      while (System.nanoTime() < warmUpEnd) {
        part(journal, 1, Duration.ofMillis(500).toNanos(), false);
        part(journal, 32, Duration.ofMillis(500).toNanos(), false);
      }
      double[] beginRatio = new double[slices];
      double[] beginFullRatio = new double[slices];
      double[] scaleRatio = new double[slices];
      double[] opScale = new double[slices];
      double[] overRaw = new double[slices];
      double[] rawRatio = new double[slices];
      double[] rawDataSyncRatio = new double[slices];
      double[] cpuCeiling = new double[slices];
      System.out.println("slice  fsync_us  fsync2_us  sqlite_us  begin_us  begin/fsync  begin/fsync2  begin/sqlite"
          + "  begins/s(1t)  begins/s(32t)  32t/1t  cpu_us(1t)  cpu_us(32t)  ceiling  ops/s(1t)  ops/s(32t)  32t/1t");
      for (int s = 0; s < slices; s++) {
        double fsyncMicros = fsyncMicros(run.resolve("fsync.probe"), 200, false);
        double fullFsyncMicros = fsyncMicros(run.resolve("fsync2.probe"), 200, true);
        double sqliteMicros = rawSqliteMicros(run.resolve("raw-" + s + ".db"), 500, false);
        double sqliteDataSyncMicros = rawSqliteMicros(run.resolve("rawds-" + s + ".db"), 500, true);
        rawRatio[s] = sqliteMicros / fsyncMicros;
        rawDataSyncRatio[s] = sqliteDataSyncMicros / fsyncMicros;
        Part beginPart = part(journal, 1, sliceNanos, true);
        Part beginManyPart = part(journal, 32, sliceNanos, true);
        double begins = beginPart.perSecond();
        double beginsMany = beginManyPart.perSecond();
        double one = part(journal, 1, sliceNanos, false).perSecond();
        double many = part(journal, 32, sliceNanos, false).perSecond();
        cpuCeiling[s] = CORES * 1e6 / begins / beginManyPart.cpuMicrosEach();
        double beginMicros = 1e6 / begins;
        beginRatio[s] = beginMicros / fsyncMicros;
        beginFullRatio[s] = beginMicros / fullFsyncMicros;
        scaleRatio[s] = beginsMany / begins;
        opScale[s] = many / one;
        overRaw[s] = beginMicros / sqliteMicros;
        System.out.printf(Locale.ROOT, "%5d  %8.0f  %9.0f  %9.0f  %8.0f  %11.2f  %12.2f  %12.2f  %12.0f  %13.0f  %6.2f"
            + "  %10.0f  %11.0f  %7.2f  %9.0f  %10.0f  %6.2f%n", s, fsyncMicros, fullFsyncMicros, sqliteMicros,
            beginMicros, beginRatio[s], beginFullRatio[s], overRaw[s], begins, beginsMany, scaleRatio[s],
            beginPart.cpuMicrosEach(), beginManyPart.cpuMicrosEach(), cpuCeiling[s], one, many, opScale[s]);
      }
      System.out.printf(Locale.ROOT, "median begin / fsync (1 thread): %.2f (goal <= 1.5, %s)%n", median(beginRatio),
          median(beginRatio) <= 1.5 ? "met" : "NOT met");
      System.out.printf(Locale.ROOT, "median begin / fsync(2) of 256 B, SQLite's own sync call (1 thread): %.2f (like"
          + " with like: SQLite syncs its WAL with fsync(2), which also writes the inode's new mtime; the line above"
          + " divides by fdatasync, which does not)%n", median(beginFullRatio));
      System.out.printf(Locale.ROOT, "median bare SQLite insert+commit / fdatasync: %.2f with synchronous=FULL (SQLite"
          + " calls fsync(2)); %.2f with synchronous=NORMAL and an fdatasync of the -wal file after each commit"
          + " (no goal: what the sync call alone changes)%n", median(rawRatio), median(rawDataSyncRatio));
      System.out.printf(Locale.ROOT, "median begin / bare SQLite insert+commit (1 thread): %.2f (no goal: what Idem"
          + " adds to SQLite's own cost)%n", median(overRaw));
      System.out.printf(Locale.ROOT, "median durable begins/s 32 threads / 1 thread: %.2f (goal >= 5, %s)%n",
          median(scaleRatio), median(scaleRatio) >= 5 ? "met" : "NOT met");
      System.out.printf(Locale.ROOT, "median CPU ceiling of that ratio: %.2f = %d cores x (1-thread wall time per begin)"
          + " / (process CPU time per begin with 32 threads); 32 threads cannot go past it however the commits are"
          + " shared, only by spending less CPU per begin%n", median(cpuCeiling), CORES);
      System.out.printf(Locale.ROOT, "median whole operations/s 32 threads / 1 thread: %.2f (no goal)%n",
          median(opScale));
      if (bulk > 0) {
        fileSize(journal, run.resolve("journal"), bulk);
      }
    } finally {
      deleteTree(run);
    }
  }

  /** Writes {@code count} operations with 32 threads, then purges them; prints sizes and open times. */
  private static void fileSize(JdbcJournal journal, Path dir, long count) throws Exception {
    long start = System.nanoTime();
    AtomicLong left = new AtomicLong(count);
    runThreads(32, () -> {
      Random random = new Random(SEEDS.incrementAndGet());
      try {
        while (left.getAndDecrement() > 0) {
          operation(journal, random, false);
        }
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    journal.flush();
    double seconds = (System.nanoTime() - start) / 1e9;
    System.out.printf(Locale.ROOT, "%,d operations in %.1f s (%.0f ops/s, 32 threads); database %s%n", count,
        seconds, count / seconds, sizes(dir));
    journal.close();
    long openStart = System.nanoTime();
    try (JdbcJournal reopened = JdbcJournal.openEmbedded(dir)) {
      System.out.printf(Locale.ROOT, "open with %,d operations (integrity_check included): %.1f s%n", count,
          (System.nanoTime() - openStart) / 1e9);
      long purgeStart = System.nanoTime();
      int purged = reopened.purge(FAR_FUTURE);
      System.out.printf(Locale.ROOT, "purge of %,d operations: %.1f s; database after the purge %s%n", purged,
          (System.nanoTime() - purgeStart) / 1e9, sizes(dir));
    }
    long emptyOpen = System.nanoTime();
    JdbcJournal.openEmbedded(dir).close();
    System.out.printf(Locale.ROOT, "open after the purge: %.2f s; database %s (SQLite reuses the freed pages;"
        + " VACUUM would return them to the disk)%n", (System.nanoTime() - emptyOpen) / 1e9, sizes(dir));
  }

  /**
   * One part's figures: operations per second, and the whole process's CPU time (every thread: the
   * callers, the JIT, the GC, the kernel on their behalf) per operation over the same window.
   */
  private record Part(double perSecond, double cpuMicrosEach) {
  }

  /**
   * Runs operations on {@code threads} threads for {@code nanos}; returns its rate and CPU cost.
   * Then flushes (untimed) and purges the part's rows.
   */
  private static Part part(JdbcJournal journal, int threads, long nanos, boolean beginOnly) throws Exception {
    AtomicLong done = new AtomicLong();
    long[] elapsed = new long[1];
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    long[] end = new long[1];
    for (int t = 0; t < threads; t++) {
      Thread w = new Thread(() -> {
        Random random = new Random(SEEDS.incrementAndGet());
        try {
          go.await();
          while (System.nanoTime() < end[0]) {
            operation(journal, random, beginOnly);
            done.incrementAndGet();
          }
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      w.start();
      workers.add(w);
    }
    long cpuStart = OS.getProcessCpuTime();
    long start = System.nanoTime();
    end[0] = start + nanos;
    go.countDown();
    for (Thread w : workers) {
      w.join();
    }
    elapsed[0] = System.nanoTime() - start;
    long cpu = OS.getProcessCpuTime() - cpuStart;
    journal.flush();
    journal.purge(FAR_FUTURE);
    if (beginOnly) {
      // begun operations stay PENDING, which purge keeps: finish them first (untimed)
      List<dev.idem.core.OperationRecord> page;
      do {
        page = journal.findByState(OperationState.PENDING, null, 1000);
        for (var r : page) {
          Lease lease = journal.claim(r.id(), "bench", Instant.now(), Duration.ofMinutes(1)).orElseThrow();
          journal.transition(r.id(), lease, Transition.finish(OperationState.FAILED, Instant.now(), null, "bench"));
        }
      } while (!page.isEmpty());
      journal.purge(FAR_FUTURE);
    }
    long n = Math.max(1, done.get());
    return new Part(done.get() / (elapsed[0] / 1e9), cpu / 1e3 / n);
  }

  /**
   * One operation as the executor writes it for a request that succeeds at once (begin, claim, one
   * attempt, the SUCCEEDED transition), or its begin only. Shared with {@link SyncCount}.
   */
  static void operation(JdbcJournal journal, Random random, boolean beginOnly) throws Exception {
    OperationId id = new OperationId("bench", "create-order", IdempotencyKey.generate(random));
    Instant now = Instant.now();
    journal.begin(new NewOperation(id, null, FP, REQUEST, now));
    if (beginOnly) {
      return;
    }
    Lease lease = journal.claim(id, "bench", now, Duration.ofMinutes(1)).orElseThrow();
    journal.recordAttempt(id, lease, new AttemptRecord(1, lease.generation(), now, now, Classification.SUCCESS, 201,
        null, "HTTP 201", Duration.ZERO, "success"));
    journal.transition(id, lease, Transition.finish(OperationState.SUCCEEDED, now, RESPONSE, null));
  }

  private static void runThreads(int n, Runnable body) throws InterruptedException {
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Thread t = new Thread(body);
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) {
      t.join();
    }
  }

  /**
   * The baseline under begin: the mean time of {@code n} bare SQLite inserts of a row like the
   * journal's, each committed, through sqlite-jdbc with the journal's settings (WAL,
   * synchronous=FULL), on a file beside the journal. With {@code ownDataSync}, an experiment the
   * journal does not use: synchronous=NORMAL (SQLite does not sync at commit) and an fdatasync of
   * the {@code -wal} file after each commit, the sync call of the fsync baseline.
   */
  private static double rawSqliteMicros(Path db, int n, boolean ownDataSync) throws Exception {
    org.sqlite.SQLiteConfig config = new org.sqlite.SQLiteConfig();
    config.setJournalMode(org.sqlite.SQLiteConfig.JournalMode.WAL);
    config.setSynchronous(ownDataSync ? org.sqlite.SQLiteConfig.SynchronousMode.NORMAL
        : org.sqlite.SQLiteConfig.SynchronousMode.FULL);
    org.sqlite.SQLiteDataSource ds = new org.sqlite.SQLiteDataSource(config);
    ds.setUrl("jdbc:sqlite:" + db);
    double[] micros = new double[n];
    Random random = new Random(SEEDS.incrementAndGet());
    try (java.sql.Connection c = ds.getConnection()) {
      try (java.sql.Statement st = c.createStatement()) {
        st.execute("CREATE TABLE op (scope TEXT NOT NULL, operation TEXT NOT NULL, op_key TEXT NOT NULL,"
            + " request TEXT NOT NULL, state TEXT NOT NULL, updated_at INTEGER NOT NULL,"
            + " PRIMARY KEY (scope, operation, op_key))");
        st.execute("CREATE INDEX op_state ON op (state, updated_at)");
      }
      c.setAutoCommit(false);
      FileChannel wal = null;
      String request = new String(BODY, StandardCharsets.UTF_8).repeat(4);
      // Untimed, until the WAL has been checkpointed and restarted at least once: the journal runs
      // in that steady state, where a commit overwrites WAL space already allocated. Timed on a new
      // file, every commit also grew the WAL, and its sync also wrote the file's new size.
      try (java.sql.PreparedStatement warm = c.prepareStatement("INSERT INTO op VALUES ('warm', 'create-order', ?,"
          + " ?, 'PENDING', ?)")) {
        for (int i = 0; i < 1500; i++) {
          warm.setString(1, IdempotencyKey.generate(random).value());
          warm.setString(2, request);
          warm.setLong(3, i);
          warm.executeUpdate();
          c.commit();
        }
      }
      try (java.sql.PreparedStatement ps = c.prepareStatement("INSERT INTO op VALUES ('bench', 'create-order', ?, ?,"
          + " 'PENDING', ?) ON CONFLICT DO NOTHING")) {
        for (int i = 0; i < n; i++) {
          long start = System.nanoTime();
          ps.setString(1, IdempotencyKey.generate(random).value());
          ps.setString(2, request);
          ps.setLong(3, start);
          ps.executeUpdate();
          c.commit();
          if (ownDataSync) {
            if (wal == null) {
              wal = FileChannel.open(Path.of(db + "-wal"), StandardOpenOption.WRITE);
            }
            wal.force(false);
          }
          micros[i] = (System.nanoTime() - start) / 1e3;
        }
      } finally {
        if (wal != null) {
          wal.close();
        }
      }
    }
    for (String suffix : new String[] {"", "-wal", "-shm"}) {
      Files.deleteIfExists(Path.of(db + suffix));
    }
    return mean(micros);
  }

  /**
   * The mean time of {@code n} syncs of a 256-byte overwrite of a file beside the journal: with
   * {@code full} false, {@code fdatasync} ({@code force(false)}: the data only, the "one
   * fsync of 256 B"); with {@code full} true, {@code fsync(2)} ({@code force(true)}), which also
   * writes the inode's changed mtime, as SQLite's sync of its WAL does (sqlite-jdbc's SQLite calls
   * fsync, not fdatasync: strace shows it).
   */
  private static double fsyncMicros(Path file, int n, boolean full) throws Exception {
    double[] micros = new double[n];
    ByteBuffer buf = ByteBuffer.allocate(256);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      for (int i = 0; i < n; i++) {
        buf.clear();
        long start = System.nanoTime();
        ch.write(buf, 0);
        ch.force(full);
        micros[i] = (System.nanoTime() - start) / 1e3;
      }
    }
    return mean(micros);
  }

  private static String sizes(Path dir) throws Exception {
    StringBuilder sb = new StringBuilder();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.filter(p -> p.getFileName().toString().startsWith("idem-journal.db")).sorted().toList()) {
        sb.append(sb.length() == 0 ? "" : ", ").append(f.getFileName()).append(' ')
            .append(String.format(Locale.ROOT, "%.1f MB", Files.size(f) / 1e6));
      }
    }
    return sb.toString();
  }

  /**
   * The baselines' statistic: the mean, as begin's figure is (a part's operations per second on
   * one thread is its mean time per begin). Both baselines were medians, and on a disk whose sync
   * times have a long tail (3 to 10 times the median at the 90th percentile on this shared machine)
   * a mean divided by a median overstated begin by that tail, checkpoints included.
   */
  private static double mean(double[] values) {
    double sum = 0;
    for (double v : values) {
      sum += v;
    }
    return sum / values.length;
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  private static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).strip();
    } catch (Exception e) {
      return "unknown";
    }
  }

  private static void deleteTree(Path dir) throws Exception {
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
