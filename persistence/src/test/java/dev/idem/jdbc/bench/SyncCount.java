package dev.idem.jdbc.bench;

import dev.idem.jdbc.JdbcJournal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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
        JournalBenchmark.operation(journal, warm, false);
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
              JournalBenchmark.operation(journal, random, beginOnly);
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
}
