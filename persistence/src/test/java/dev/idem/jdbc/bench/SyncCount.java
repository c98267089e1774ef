package dev.idem.jdbc.bench;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.Fingerprint;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.ResponseSnapshot;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One phase of the journal's work, for counting its disk syncs from outside, which no load on a
 * shared machine can disturb (unlike a time):
 *
 * <pre>
 * strace -f -c -e trace=fsync,fdatasync java -cp ... dev.idem.jdbc.bench.SyncCount begin 1 2000 DIR
 * </pre>
 *
 * Arguments: the phase ({@code begin}: begins only; {@code op}: begin, claim, attempt, success),
 * threads, operations in all, and a directory. It first opens the journal and writes a warm-up of
 * 200 operations, then prints a marker line and the timed phase's figures; run it with 0
 * operations to count what opening and closing cost, and subtract.
 */
public final class SyncCount {
  private static final Fingerprint FP = new Fingerprint("a".repeat(64));
  private static final RequestSnapshot REQUEST = RequestSnapshot.builder("POST",
      URI.create("https://api.example.test/v1/orders")).header("Content-Type", "application/json")
      .body("{\"amount\":1999,\"currency\":\"EUR\",\"customer\":\"cus_123\"}".getBytes(StandardCharsets.UTF_8),
          "application/json").build();
  private static final ResponseSnapshot RESPONSE = new ResponseSnapshot(201,
      Map.of("Content-Type", List.of("application/json")), "{\"id\":\"ord_1\"}".getBytes(StandardCharsets.UTF_8));

  private SyncCount() {
  }

  public static void main(String[] args) throws Exception {
    boolean beginOnly = args[0].equals("begin");
    int threads = Integer.parseInt(args[1]);
    long count = Long.parseLong(args[2]);
    Path dir = Files.createDirectories(Path.of(args[3]));
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      Random warm = new Random(1);
      for (int i = 0; i < 200; i++) {
        operation(journal, warm, false);
      }
      journal.flush();
      AtomicLong left = new AtomicLong(count);
      AtomicLong seeds = new AtomicLong();
      long start = System.nanoTime();
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Thread w = new Thread(() -> {
          Random random = new Random(seeds.incrementAndGet() * 7919);
          try {
            while (left.getAndDecrement() > 0) {
              operation(journal, random, beginOnly);
            }
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
        w.start();
        workers.add(w);
      }
      for (Thread w : workers) {
        w.join();
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      System.out.printf(Locale.ROOT, "%s x%d: %d in %.2f s, %.0f/s, %.0f us each%n", args[0], threads, count, seconds,
          count / seconds, seconds * 1e6 / Math.max(1, count));
    }
  }

  private static void operation(JdbcJournal journal, Random random, boolean beginOnly) throws Exception {
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
}
