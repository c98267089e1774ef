package dev.idem.bench;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.RecordId;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;
import java.util.UUID;

/**
 * The CPU one claim of a new key costs the guard's embedded SQLite store, on one thread, without
 * HTTP: the claim is the guard's first statement per request (G1, issue 28), and a new key is the
 * usual case. The claim's write is deferred (it rides on the next commit), so the figure is the
 * statement and the store's bookkeeping, not a disk sync; the calling thread runs the statement
 * itself. A figure a loaded machine moves far less than the end-to-end rate.
 *
 * <p>Run by {@code mvn -B -q -pl benchmarks -am test-compile -Pbench-guard-claim}; system properties
 * {@code idem.bench.claim.rounds} (8, the first 4 not counted: the JIT) and
 * {@code idem.bench.claim.perRound} (20,000 claims).
 */
public final class GuardClaimBenchmark {
  private GuardClaimBenchmark() {
  }

  /**
   * Runs the rounds and prints each and the median of the counted ones.
   *
   * @param args none
   * @throws Exception if the store cannot be opened or a claim fails
   */
  public static void main(String[] args) throws Exception {
    int rounds = Integer.getInteger("idem.bench.claim.rounds", 8);
    int perRound = Integer.getInteger("idem.bench.claim.perRound", 20_000);
    int warmup = rounds / 2;
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    Path dir = Files.createTempDirectory("idem-bench-claim");
    Fingerprint fingerprint = new Fingerprint("a".repeat(64));
    double[] counted = new double[rounds - warmup];
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(dir.resolve("guard.db"))) {
      for (int round = 0; round < rounds; round++) {
        long cpuStart = threads.getCurrentThreadCpuTime();
        for (int i = 0; i < perRound; i++) {
          Instant now = Instant.now();
          store.claim(new RecordId("anonymous", "POST /orders", UUID.randomUUID().toString()), fingerprint,
              "bench-owner", now, now.plus(Duration.ofSeconds(30)), now.plus(Duration.ofDays(1)));
        }
        double micros = (threads.getCurrentThreadCpuTime() - cpuStart) / 1e3 / perRound;
        System.out.printf(Locale.ROOT, "round %d%s: %.2f µs of CPU per claim of a new key%n", round,
            round < warmup ? " (warm-up)" : "", micros);
        if (round >= warmup) {
          counted[round - warmup] = micros;
        }
      }
    }
    Arrays.sort(counted);
    double median = counted.length % 2 == 1 ? counted[counted.length / 2]
        : (counted[counted.length / 2 - 1] + counted[counted.length / 2]) / 2;
    System.out.printf(Locale.ROOT, "RESULT %.2f µs of the calling thread's CPU per claim of a new key (median of %d"
        + " rounds of %d)%n", median, counted.length, perRound);
  }
}
