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
 * response. Runs single-threaded and with 32 threads, with {@code syncToDisk} on (the default:
 * WRITE_DELAY=0 plus one fsync per group commit) and off (WRITE_DELAY=0 only: survives kill -9, not
 * power loss). Goals: single-threaded cost at most 1.5 fsyncs per operation; 32 threads at least 5x
 * the single-threaded throughput. Each configuration alternates slices of fsync, single-threaded and
 * 32-thread measurements ({@code -Dbench.slices=N}, default 40, so a slice lasts a fraction of a second) and reports the median of the
 * per-slice ratios, so that both sides of a ratio see the same machine load.
 *
 * <p>Tried and dropped (2 cores, load average 0.9 to 3.3): several H2 connections instead of one.
 * Each operation was pinned to one of K connections by the hash of its id, so its deferred writes
 * could stay in that connection's open transaction. Row-less work took every connection. Commits on
 * any connection shared one fdatasync. With syncToDisk on, 32 threads reached 2.15x and 2.00x the
 * single-threaded throughput with K=4, and 2.17x with K=8. One connection reached 2.22x, 1.87x and
 * 1.98x in the same session. That is within noise and far from 5x. With syncToDisk off, 32 threads
 * stayed at 2160 to 2490 ops/s in every configuration. A JFR profile at 32 threads with K=4 and sync
 * on put 57% of the CPU samples in {@code MVStore.store} (page serialization of the chunk each commit
 * writes with WRITE_DELAY=0). The MVStore runs that under its store lock, one commit at a time. Each
 * operation has a random key, so it dirties its own leaf pages, and a bigger group does not make the
 * chunk cheaper per operation. Process CPU was about 600 to 750 us per operation at 32 threads, which
 * caps 2 cores near 2500 to 3000 ops/s. That is about 3.5x of 1 thread with sync on, however many
 * connections run statements. The design also broke {@code JournalKillTest}: a completion no longer
 * reaches the disk with the next begin when that begin commits another connection.
 */
public final class JournalBenchmark {
  private static final byte[] BODY = "{\"amount\":1999,\"currency\":\"EUR\",\"customer\":\"cus_123\"}"
      .getBytes(StandardCharsets.UTF_8);
  private static final Fingerprint FP = new Fingerprint("a".repeat(64));

  private JournalBenchmark() {
  }

  public static void main(String[] args) throws Exception {
    int ops = Integer.getInteger("bench.ops", 4000);
    int slices = Integer.getInteger("bench.slices", 40);
    Path base = Path.of(System.getProperty("bench.dir", "target/bench"));
    Files.createDirectories(base);
    Path run = Files.createTempDirectory(base.toAbsolutePath(), "run-");
    try {
      System.out.printf(Locale.ROOT, "Idem H2 journal benchmark: %d operations single-threaded and %d with 32 threads"
          + " per configuration, in %d interleaved slices; %d cores; %s; load average %s%n", ops, ops * 2, slices,
          Runtime.getRuntime().availableProcessors(), run, loadAverage());
      // Warm the JIT on a throwaway journal, so that the first measured configuration is not the cold one.
      try (JdbcJournal warm = JdbcJournal.h2(run.resolve("warm-up")).syncToDisk(false).open()) {
        timeOps(warm, new Random(2), 1, Math.min(ops, 2000));
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
  record Slices(double[] fsyncMicros, double[] singleMicrosPerOp, double[] multiOpsPerSecond) {
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
    try (JdbcJournal journal = JdbcJournal.h2(dir).syncToDisk(sync).open()) {
      Random random = new Random(1);
      timeOps(journal, random, 1, Math.min(500, ops / 4)); // warm-up
      for (int i = 0; i < slices; i++) {
        fsync[i] = fsyncMicros(fsyncFile, 50);
        int n = Math.max(1, ops / slices);
        single[i] = timeOps(journal, random, 1, n) / 1000.0 / n;
        multi[i] = 2 * n / (timeOps(journal, random, 32, 2 * n) / 1e9);
      }
    }
    return new Slices(fsync, single, multi);
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

  /** Runs {@code ops} operations on {@code threads} threads, then flushes; returns the nanoseconds taken. */
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
