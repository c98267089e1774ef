package dev.idem.server;

import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.StoredResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server JVM of {@link GuardStoreKillTest}: {@code threads} threads claim and complete keys on
 * one embedded SQLite store as fast as group commit lets them, and log each call that returned
 * ({@code claimed <key>}, then {@code completed <key>}) only after it returned: what a handler or
 * a client was allowed to act on. Once {@code killAfter} completions are logged it SIGKILLs
 * itself, with every thread still writing. The log is written without a sync: a killed process's
 * writes stay in the page cache.
 *
 * <p>Arguments: the database file, the log file, the thread count, the completions before the kill.
 */
public final class GuardStoreKillChild {
  private GuardStoreKillChild() {}

  public static void main(String[] args) throws Exception {
    Path db = Path.of(args[0]);
    FileChannel log = FileChannel.open(Path.of(args[1]), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.APPEND);
    int threads = Integer.parseInt(args[2]);
    int killAfter = Integer.parseInt(args[3]);
    JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(db);
    AtomicInteger completed = new AtomicInteger();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      Thread worker = new Thread(() -> {
        try {
          for (int n = 0; ; n++) {
            String key = thread + "-" + n;
            RecordId id = new RecordId("tenant", "POST /orders", key);
            Instant now = Instant.now();
            ClaimAttempt a = store.claim(id, StoreContract.A, "owner-" + thread, now, now.plus(Duration.ofSeconds(30)),
                now.plus(Duration.ofHours(1)));
            long generation = ((ClaimAttempt.Claimed) a).generation();
            append(log, "claimed " + key);
            StoredResponse response = new StoredResponse(201, Map.of("X-Key", List.of(key)),
                key.getBytes(StandardCharsets.UTF_8), false);
            if (!store.complete(id, generation, "owner-" + thread, Instant.now(), response,
                now.plus(Duration.ofHours(1)))) {
              throw new IllegalStateException("completion of " + key + " refused");
            }
            append(log, "completed " + key);
            if (completed.incrementAndGet() == killAfter) {
              new ProcessBuilder("kill", "-9", Long.toString(ProcessHandle.current().pid())).start();
            }
          }
        } catch (Throwable e) {
          e.printStackTrace();
          Runtime.getRuntime().halt(5);
        }
      }, "worker-" + t);
      worker.start();
    }
    Thread.sleep(50_000);
    System.out.println("not killed");
    Runtime.getRuntime().halt(4);
  }

  private static synchronized void append(FileChannel log, String line) throws java.io.IOException {
    ByteBuffer b = StandardCharsets.UTF_8.encode(line + "\n");
    while (b.hasRemaining()) {
      log.write(b);
    }
  }
}
