package dev.idem.jdbc.bench;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.PooledDataSource;
import dev.idem.jdbc.support.PostgresCluster;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * How fast {@code resumePending} works through a backlog (issue 30, goal P4 of the performance
 * issue), and how soon in it a restart's own leases go out again: N queued operations journaled,
 * and 10 that an earlier incarnation under the same owner name held when it died; then one pass
 * with an answer at once from the transport, so that the journal and the resume are what is
 * measured. On the embedded journal and, where
 * PostgreSQL's binaries are installed, on a throwaway PostgreSQL (a plain DataSource: a connection
 * per call, as without a pool). A program, not a test:
 *
 * <pre>
 * mvn -B -o -q -pl persistence -am test-compile
 * mvn -B -o -q -pl persistence exec:java -Dexec.skip=false -Dexec.classpathScope=test \
 *     -Dexec.mainClass=dev.idem.jdbc.bench.ResumeBenchmark -Dbench.resume.operations=2000
 * </pre>
 *
 * Properties: {@code bench.resume.operations} (default 2,000), {@code bench.resume.concurrency}
 * (comma-separated, default 1,4,16).
 */
public final class ResumeBenchmark {
  /** Operations an earlier incarnation of the same owner held when it died. */
  private static final int OWN = 10;

  @Test
  @EnabledIfSystemProperty(named = "bench.resume.operations", matches = "\\d+")
  void measure() throws Exception {
    main(new String[0]);
  }

  public static void main(String[] args) throws Exception {
    int n = Integer.getInteger("bench.resume.operations", 2_000);
    List<Integer> concurrencies = List.of(System.getProperty("bench.resume.concurrency", "1,4,16").split(","))
        .stream().map(String::strip).map(Integer::parseInt).toList();
    for (int c : concurrencies) {
      Path dir = Files.createTempDirectory("idem-resume-bench");
      try (JdbcJournal journal = JdbcJournal.openEmbedded(dir.resolve("journal"))) {
        report("sqlite", n, c, run(journal, n, c));
      }
    }
    Optional<Path> bin = PostgresCluster.findBinaries();
    if (bin.isEmpty()) {
      System.out.println("postgresql: no binaries, skipped");
      return;
    }
    try (PostgresCluster pg = PostgresCluster.start(bin.get())) {
      for (int c : concurrencies) {
        DataSource ds = new PooledDataSource(pg.dataSource(pg.createDatabase()), 20);
        try (JdbcJournal journal = JdbcJournal.dataSource(ds).open()) {
          report("postgresql", n, c, run(journal, n, c));
        }
      }
    }
  }

  /**
   * Journals {@code n} queued operations, and 10 more that an earlier incarnation of the same owner
   * was sending when it died (IN_FLIGHT under its live lease); then times one resume pass, and when
   * the last of those 10 went out again.
   *
   * @return the pass and the 10 own operations' resend, in nanoseconds from the pass's start
   */
  private static long[] run(JdbcJournal journal, int n, int concurrency) throws Exception {
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).owner("bench")
        .resumeConcurrency(concurrency).build();
    try {
      for (int i = 0; i < n; i++) {
        executor.enqueue(Operation.builder("create-order", request(i)).build());
      }
      Set<IdempotencyKey> own = ConcurrentHashMap.newKeySet();
      for (int i = 0; i < OWN; i++) {
        Operation op = Operation.builder("create-order", request(n + i)).build();
        executor.enqueue(op);
        journal.claim(op.id(), "bench", Instant.now(), Duration.ofMinutes(2)).orElseThrow();
        own.add(op.key());
      }
      ResponseSnapshot created = new ResponseSnapshot(201, Map.of(), "{}".getBytes(StandardCharsets.UTF_8));
      AtomicLong ownDone = new AtomicLong();
      long start = System.nanoTime();
      Transport instant = (request, key) -> {
        if (own.remove(key) && own.isEmpty()) {
          ownDone.set(System.nanoTime() - start);
        }
        return created;
      };
      ResumeSummary summary = executor.resumePending(Map.of("create-order",
          ResumeHandler.of(instant, o -> { }, f -> { throw new AssertionError(f); })));
      long took = System.nanoTime() - start;
      if (summary.succeeded() != n + OWN) {
        throw new AssertionError("resumed " + summary);
      }
      return new long[] {took, ownDone.get()};
    } finally {
      executor.close();
    }
  }

  private static RequestSnapshot request(int i) {
    return RequestSnapshot.builder("POST", URI.create("http://127.0.0.1:9/orders"))
        .body(("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8), "application/json").build();
  }

  private static void report(String journal, int n, int concurrency, long[] nanos) {
    double seconds = nanos[0] / 1e9;
    System.out.printf("%-10s resumeConcurrency %2d: %d operations in %.2f s, %.0f ops/s; the %d own leases"
        + " resent after %.2f s%n", journal, concurrency, n + OWN, seconds, (n + OWN) / seconds, OWN, nanos[1] / 1e9);
  }
}
