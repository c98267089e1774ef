package dev.idem.core.bench;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Jitter;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.RetryPolicy;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;

/**
 * What Idem's retry budget, breaker and jitter do to a host in trouble: 1,000 concurrent
 * operations against one host, through an in-process fake transport on virtual time (no network,
 * no sleeping; seeded, so every run prints the same numbers). A program, not a test:
 *
 * <pre>
 * mvn -B -q -pl sdk-core test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=dev.idem.core.bench.OutageBenchmark
 * </pre>
 */
public final class OutageBenchmark {
  private static final int OPS = 1_000;
  private static final long SEED = 42;

  private OutageBenchmark() {}

  public static void main(String[] args) {
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      // 1,000 operations giving up would log 1,000 WARN lines; the table is the output here.
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
    }
    long wall = System.nanoTime();
    out("Idem outage benchmark: %,d concurrent operations against one host; in-process fake transport,"
        + " virtual time, seed %d%n%n", OPS, SEED);

    List<Row> rows = new ArrayList<>();
    rows.add(outage("total outage (HTTP 503): Idem defaults (budget 500/5 + breaker)", b -> b, "<= 1.2", 1.2));
    rows.add(outage("total outage (HTTP 503): default budget, breaker off",
        b -> b.circuitBreaker(CircuitBreakerSettings.disabled()), "<= 1.2", 1.2));
    rows.add(outage("total outage (HTTP 503): plain policy, no budget, no breaker",
        b -> b.circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()),
        "(up to maxAttempts = 5)", Double.NaN));
    rows.add(sustainedOutage());
    rows.add(transientErrors());

    out("%-66s %11s %9s %7s %6s %9s  %-22s %s%n", "scenario", "attempts/op", "succeeded", "pending", "failed",
        "uncertain", "goal", "met");
    for (Row r : rows) {
      out("%-66s %11.3f %9d %7d %6d %9d  %-22s %s%n", r.name, r.attemptsPerOp, r.succeeded, r.pending, r.failed,
          r.uncertain, r.goal, r.met);
    }

    out("%nSpread of retries after a synchronized failure: all %,d operations get HTTP 503 at t = 0, then succeed;"
        + "%nbase delay 200 ms; retries counted in 50 ms windows over [0, 200 ms]; no budget, no breaker.%n%n", OPS);
    Spread full = spread(Jitter.FULL);
    Spread none = spread(Jitter.NONE);
    out("%-7s %8s %12s %12s %10s  %-30s %s%n", "jitter", "retries", "peak/window", "mean/window", "peak/mean", "goal",
        "met");
    out("%-7s %8d %12d %12.1f %10.2f  %-30s %s%n", "FULL", full.retries, full.peak, full.mean, full.ratio(),
        "peak/mean <= 1.5 (spread out)", full.ratio() <= 1.5 ? "yes" : "NO");
    out("%-7s %8d %12d %12.1f %10.2f  %-30s %s%n", "NONE", none.retries, none.peak, none.mean, none.ratio(),
        "(for comparison: one spike)", "-");
    out("%nran in %.1f s of wall time%n", (System.nanoTime() - wall) / 1e9);
  }

  /** One scenario's result. */
  private record Row(String name, double attemptsPerOp, int succeeded, int pending, int failed, int uncertain,
      String goal, String met) {}

  private static IdempotentExecutor.Builder executor(VirtualTime time, InMemoryJournal journal, Random random) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run)
        .sleeper(time.sleeper()).random(random::nextDouble);
  }

  private static Operation op(int i) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + i + "}")).build();
  }

  /** Every operation executed once (async, all at t = 0) against a host that answers 503. */
  private static Row outage(String name, UnaryOperator<IdempotentExecutor.Builder> config, String goal, double max) {
    VirtualTime time = new VirtualTime();
    InMemoryJournal journal = new InMemoryJournal();
    FakeHost host = new FakeHost(time, FakeHost.always(503)).latency(Duration.ofMillis(20));
    IdempotentExecutor idem = config.apply(executor(time, journal, new Random(SEED))).build();
    List<CompletableFuture<Outcome>> futures = new ArrayList<>();
    for (int i = 0; i < OPS; i++) {
      futures.add(idem.executeAsync(op(i), host));
    }
    time.advance(Duration.ofMinutes(2));  // past the 60 s deadline: every execution has ended
    long open = futures.stream().filter(f -> !f.isDone()).count();
    if (open > 0) {
      throw new IllegalStateException(open + " executions still running");
    }
    return row(name, host, journal, goal, max);
  }

  /** Ten minutes of outage with an outbox redelivering every pending operation as it comes due. */
  private static Row sustainedOutage() {
    VirtualTime time = new VirtualTime();
    InMemoryJournal journal = new InMemoryJournal();
    FakeHost host = new FakeHost(time, FakeHost.always(503)).latency(Duration.ofMillis(20));
    IdempotentExecutor idem = executor(time, journal, new Random(SEED)).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).maxInFlight(OPS).pageSize(500).build().start();
    for (int i = 0; i < OPS; i++) {
      outbox.submit(op(i));
    }
    time.advance(Duration.ofMinutes(10));
    outbox.close();
    return row("10 min outage, OutboxDispatcher redelivering, Idem defaults", host, journal, "(informational)",
        Double.NaN);
  }

  /** 10% of attempts fail with 503, independently; delivered through the outbox with the defaults. */
  private static Row transientErrors() {
    VirtualTime time = new VirtualTime();
    InMemoryJournal journal = new InMemoryJournal();
    Random faults = new Random(SEED + 1);
    FakeHost host = new FakeHost(time, (k, n, now) -> faults.nextDouble() < 0.10 ? Reply.status(503)
        : Reply.status(201)).latency(Duration.ofMillis(20));
    IdempotentExecutor idem = executor(time, journal, new Random(SEED)).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).maxInFlight(OPS).pageSize(500).build().start();
    List<CompletableFuture<Outcome>> handles = new ArrayList<>();
    for (int i = 0; i < OPS; i++) {
      handles.add(outbox.submit(op(i)));
    }
    time.advance(Duration.ofMinutes(5));
    outbox.close();
    Row r = row("10% transient errors (HTTP 503), OutboxDispatcher, Idem defaults", host, journal,
        "all succeed, <= 1.15", 1.15);
    boolean met = r.succeeded == OPS && r.attemptsPerOp <= 1.15;
    return new Row(r.name, r.attemptsPerOp, r.succeeded, r.pending, r.failed, r.uncertain, r.goal,
        met ? "yes" : "NO");
  }

  private static Row row(String name, FakeHost host, InMemoryJournal journal, String goal, double max) {
    try {
      int succeeded = (int) journal.count(OperationState.SUCCEEDED);
      int pending = (int) (journal.count(OperationState.PENDING) + journal.count(OperationState.IN_FLIGHT));
      int failed = (int) journal.count(OperationState.FAILED);
      int uncertain = (int) journal.count(OperationState.UNCERTAIN);
      double perOp = (double) host.totalAttempts() / OPS;
      String met = Double.isNaN(max) ? "-" : perOp <= max ? "yes" : "NO";
      return new Row(name, perOp, succeeded, pending, failed, uncertain, goal, met);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Retries per 50 ms window after everyone failed together. */
  private record Spread(int retries, int peak, double mean) {
    double ratio() {
      return peak / mean;
    }
  }

  private static Spread spread(Jitter jitter) {
    VirtualTime time = new VirtualTime();
    InMemoryJournal journal = new InMemoryJournal();
    FakeHost host = new FakeHost(time, (k, n, now) -> n == 1 ? Reply.status(503) : Reply.status(201));
    RetryPolicy policy = RetryPolicy.builder().jitter(jitter).baseDelay(Duration.ofMillis(200)).build();
    IdempotentExecutor idem = executor(time, journal, new Random(SEED)).retryPolicy(policy)
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();
    Instant failedAt = time.now();
    for (int i = 0; i < OPS; i++) {
      idem.executeAsync(op(i), host);
    }
    time.advance(Duration.ofSeconds(5));
    int windows = 4;
    int[] counts = new int[windows];
    List<Instant> sends = host.sendTimes();
    int retries = 0;
    for (Instant t : sends.subList(OPS, sends.size())) {
      long ms = Duration.between(failedAt, t).toMillis();
      counts[(int) Math.min(windows - 1, ms / 50)]++;  // 200 ms exactly belongs to the last window
      retries++;
    }
    int peak = 0;
    for (int c : counts) {
      peak = Math.max(peak, c);
    }
    return new Spread(retries, peak, (double) retries / windows);
  }

  private static void out(String format, Object... args) {
    System.out.printf(Locale.ROOT, format, args);
  }
}
