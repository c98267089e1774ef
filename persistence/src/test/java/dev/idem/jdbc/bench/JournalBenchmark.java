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
 * the single-threaded throughput.
 */
public final class JournalBenchmark {
  private static final byte[] BODY = "{\"amount\":1999,\"currency\":\"EUR\",\"customer\":\"cus_123\"}"
      .getBytes(StandardCharsets.UTF_8);
  private static final Fingerprint FP = new Fingerprint("a".repeat(64));

  private JournalBenchmark() {
  }

  public static void main(String[] args) throws Exception {
    int ops = Integer.getInteger("bench.ops", 4000);
    Path base = Path.of(System.getProperty("bench.dir", "target/bench"));
    Files.createDirectories(base);
    Path run = Files.createTempDirectory(base.toAbsolutePath(), "run-");
    try {
      System.out.printf(Locale.ROOT, "Idem H2 journal benchmark: %d operations per run, %d cores, %s, load average %s%n",
          ops, Runtime.getRuntime().availableProcessors(), run, loadAverage());
      // Warm the JIT on a throwaway journal, so that the first measured configuration is not the cold one.
      measure(run.resolve("warm-up"), false, 1, Math.min(ops, 2000));
      for (boolean sync : new boolean[] {true, false}) {
        String label = sync ? "syncToDisk=true (default)" : "syncToDisk=false";
        // The fsync is measured right before and after each configuration, on the same disk, and averaged:
        // on a shared machine it drifts, and the ratio should compare like with like.
        double fsyncBefore = fsyncMicros(run.resolve("fsync-" + sync + ".bin"), 1000);
        double single = measure(run.resolve("single-" + sync), sync, 1, ops);
        double multi = measure(run.resolve("multi-" + sync), sync, 32, ops * 2);
        double fsyncAfter = fsyncMicros(run.resolve("fsync-" + sync + "-after.bin"), 1000);
        double fsync = (fsyncBefore + fsyncAfter) / 2;
        System.out.printf(Locale.ROOT, "%s: fsync of a 256-byte write (FileChannel.write + force(true)): %.1f us"
            + " (%.1f before, %.1f after)%n", label, fsync, fsyncBefore, fsyncAfter);
        System.out.printf(Locale.ROOT, "%s, 1 thread:   %8.0f ops/s  %7.1f us/op%n", label, single, 1e6 / single);
        System.out.printf(Locale.ROOT, "%s, 32 threads: %8.0f ops/s  %7.1f us/op (wall time / ops)%n", label, multi,
            1e6 / multi);
        System.out.printf(Locale.ROOT, "%s: RATIOS single-threaded cost = %.2f x one fsync (goal <= 1.5);"
            + " 32 threads = %.2f x single-threaded throughput (goal >= 5)%n", label, (1e6 / single) / fsync,
            multi / single);
      }
      System.out.printf(Locale.ROOT, "load average at the end: %s%n", loadAverage());
    } finally {
      deleteTree(run);
    }
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
      for (int i = 0; i < 200; i++) {
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

  /** Returns operations per second. */
  static double measure(Path dir, boolean sync, int threads, int ops) throws Exception {
    try (JdbcJournal journal = JdbcJournal.h2(dir).syncToDisk(sync).open()) {
      Random random = new Random(1);
      runOps(journal, random, 1, Math.min(500, ops / 4)); // warm-up
      long t0 = System.nanoTime();
      runOps(journal, random, threads, ops);
      journal.flush();
      return ops / ((System.nanoTime() - t0) / 1e9);
    }
  }

  private static void runOps(JdbcJournal journal, Random random, int threads, int ops) throws Exception {
    List<IdempotencyKey> keys = new ArrayList<>(ops);
    for (int i = 0; i < ops; i++) {
      keys.add(IdempotencyKey.generate(random));
    }
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
