package dev.idem.jdbc;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The child JVM of {@link JournalKillTest}: submits operations through the real
 * {@link IdempotentExecutor} on the embedded journal and halts the JVM at one point.
 *
 * <p>Arguments: journal directory, server log file, point, operation count, threads, and optionally
 * {@code unsafe-in-memory}: the negative control, which journals in memory only (the directory stays
 * empty), to show that the parent's checks do catch lost records.
 * Points: {@code after-begin} and {@code before-completion} (on the last operation, through
 * {@link HaltingJournal}); {@code after-send} (the transport halts once the last operation's request
 * has reached the "server"); {@code after-sends:K} (many threads; the transport halts after the K-th
 * request reaches the server). The "server" appends every key it receives to the server log, so the
 * parent can check that every request that went out has its durable record.
 */
public final class KillChild {
  static final long SEED = 20261130L;

  private KillChild() {
  }

  /** The keys the child uses, in order, so that the parent knows them without being told. */
  static List<IdempotencyKey> keys(int count) {
    Random random = new Random(SEED);
    List<IdempotencyKey> keys = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      keys.add(IdempotencyKey.generate(random));
    }
    return keys;
  }

  static RequestSnapshot request(int i) {
    return RequestSnapshot.builder("POST", java.net.URI.create("https://payments.example.test/v1/charges"))
        .header("Content-Type", "application/json")
        .body(("{\"charge\":" + i + "}").getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    Path serverLog = Path.of(args[1]);
    String point = args[2];
    int count = Integer.parseInt(args[3]);
    int threads = Integer.parseInt(args[4]);
    List<IdempotencyKey> keys = keys(count);
    IdempotencyKey last = keys.get(count - 1);
    int haltAfterSends = point.startsWith("after-sends:") ? Integer.parseInt(point.substring(12)) : -1;

    HaltingJournal.Point journalPoint = switch (point) {
      case "after-begin" -> HaltingJournal.Point.AFTER_BEGIN;
      case "before-completion" -> HaltingJournal.Point.BEFORE_COMPLETION;
      default -> HaltingJournal.Point.NEVER;
    };
    boolean unsafe = args.length > 5 && args[5].equals("unsafe-in-memory");
    dev.idem.core.spi.Journal jdbc = unsafe ? new dev.idem.core.InMemoryJournal() : JdbcJournal.openEmbedded(dir);
    IdempotentExecutor executor = IdempotentExecutor.builder()
        .journal(new HaltingJournal(jdbc, journalPoint, last))
        .owner("child")
        .build();

    AtomicInteger sends = new AtomicInteger();
    try (FileChannel server = FileChannel.open(serverLog, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.APPEND)) {
      Transport transport = (request, key) -> {
        synchronized (server) {
          server.write(ByteBuffer.wrap((key.value() + "\n").getBytes(StandardCharsets.US_ASCII)));
        }
        if ((point.equals("after-send") && key.equals(last)) || sends.incrementAndGet() == haltAfterSends) {
          Runtime.getRuntime().halt(HaltingJournal.HALT_CODE);
        }
        return new ResponseSnapshot(201, Map.of("content-type", List.of("application/json")),
            ("{\"ok\":\"" + key.value() + "\"}").getBytes(StandardCharsets.UTF_8));
      };
      List<Thread> workers = new ArrayList<>();
      AtomicInteger next = new AtomicInteger();
      for (int t = 0; t < threads; t++) {
        Thread w = new Thread(() -> {
          for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
            try {
              executor.execute(Operation.builder("charge", request(i)).key(keys.get(i)).build(), transport);
            } catch (IOException e) {
              System.out.println("operation " + i + " failed: " + e);
            }
          }
        });
        w.start();
        workers.add(w);
      }
      for (Thread w : workers) {
        w.join();
      }
    }
    System.out.println("finished without halting");
    System.exit(1);
  }
}
