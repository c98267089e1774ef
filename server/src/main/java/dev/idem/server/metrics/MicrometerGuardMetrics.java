package dev.idem.server.metrics;

import dev.idem.server.GuardListener;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.RecordStats;
import dev.idem.storage.StorageSizeGauge;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The numbers seed 000 asks to watch on the server: records by state, the oldest unexpired key,
 * the purge lag, the age of the oldest claim in flight (processing age), stuck claims (lease
 * expired: alert on these rather than delete them), key conflicts, payload mismatches, takeovers,
 * waits, replays and purges. Give it to the guard as its listener:
 *
 * <pre>{@code
 * MicrometerGuardMetrics metrics = MicrometerGuardMetrics.bind(registry, store, clock);
 * IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(clock).listener(metrics).build();
 * }</pre>
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@code idem.server.records}</td><td>gauge</td><td>state ({@code in_flight},
 *       {@code completed}, {@code released})</td><td>records in the store</td></tr>
 *   <tr><td>{@code idem.server.records.stuck}</td><td>gauge</td><td></td><td>claims in flight whose
 *       lease has expired: their holder died or stalled</td></tr>
 *   <tr><td>{@code idem.server.inflight.oldest.age}</td><td>gauge, seconds</td><td></td><td>age of the
 *       oldest claim in flight (processing age); 0 when there is none</td></tr>
 *   <tr><td>{@code idem.server.records.oldest.age}</td><td>gauge, seconds</td><td></td><td>age of the
 *       oldest key still within retention: near the retention when the purge works; 0 when there is
 *       none</td></tr>
 *   <tr><td>{@code idem.server.purge.lag}</td><td>gauge, seconds</td><td></td><td>how long the oldest
 *       record past retention has waited for the purge: about the purge interval at most when it
 *       keeps up; 0 when there is none</td></tr>
 *   <tr><td>{@code idem.server.conflicts}</td><td>counter</td><td></td><td>repeats answered 409 because
 *       their key was in flight</td></tr>
 *   <tr><td>{@code idem.server.mismatches}</td><td>counter</td><td></td><td>keys reused with another
 *       payload</td></tr>
 *   <tr><td>{@code idem.server.takeovers}</td><td>counter</td><td></td><td>claims that took over an
 *       expired one</td></tr>
 *   <tr><td>{@code idem.server.recovered}</td><td>counter</td><td></td><td>claims of a dead earlier run
 *       ended at start</td></tr>
 *   <tr><td>{@code idem.server.replays}</td><td>counter</td><td></td><td>stored results replayed</td></tr>
 *   <tr><td>{@code idem.server.purged}</td><td>counter</td><td></td><td>records past retention
 *       deleted</td></tr>
 *   <tr><td>{@code idem.server.purge.failures}</td><td>counter</td><td></td><td>background purges that
 *       failed</td></tr>
 *   <tr><td>{@code idem.server.waits}</td><td>timer</td><td>outcome ({@code served}, {@code conflict})</td>
 *       <td>repeats that waited for the first request</td></tr>
 * </table>
 *
 * <p>No meter is tagged by route, caller or key, so their number is fixed. The gauges read
 * {@link IdempotencyStore#stats} once per {@code refresh} (10 s by default) however many gauges a
 * scrape reads: on a large PostgreSQL table a count by state is not free. If the store fails, the
 * gauges read NaN. Thread-safe.
 */
public final class MicrometerGuardMetrics implements GuardListener {
  private static final Logger LOG = LoggerFactory.getLogger(MicrometerGuardMetrics.class);

  private final IdempotencyStore store;
  private final Clock clock;
  private final Duration refresh;
  private final Counter conflicts;
  private final Counter mismatches;
  private final Counter takeovers;
  private final Counter recovered;
  private final Counter replays;
  private final Counter purged;
  private final Counter purgeFailures;
  private final Timer waitsServed;
  private final Timer waitsConflict;
  private RecordStats stats;
  private Instant readAt;
  private boolean failed;

  private MicrometerGuardMetrics(MeterRegistry registry, IdempotencyStore store, Clock clock, Duration refresh) {
    this.store = store;
    this.clock = clock;
    this.refresh = refresh;
    this.conflicts = Counter.builder("idem.server.conflicts")
        .description("repeats answered 409 because their key was in flight").register(registry);
    this.mismatches = Counter.builder("idem.server.mismatches")
        .description("idempotency keys reused with another payload").register(registry);
    this.takeovers = Counter.builder("idem.server.takeovers")
        .description("claims that took over an expired claim").register(registry);
    this.recovered = Counter.builder("idem.server.recovered")
        .description("claims of a dead earlier run ended at start").register(registry);
    this.replays = Counter.builder("idem.server.replays").description("stored results replayed").register(registry);
    this.purged = Counter.builder("idem.server.purged").description("records past retention deleted")
        .register(registry);
    this.purgeFailures = Counter.builder("idem.server.purge.failures").description("background purges that failed")
        .register(registry);
    this.waitsServed = Timer.builder("idem.server.waits").tag("outcome", "served")
        .description("repeats that waited for the first request").register(registry);
    this.waitsConflict = Timer.builder("idem.server.waits").tag("outcome", "conflict")
        .description("repeats that waited for the first request").register(registry);
  }

  /**
   * Creates the listener and registers the gauges, which read the store every 10 s at most.
   *
   * @param registry where meters go
   * @param store read by the gauges: the guard's store
   * @param clock the guard's clock, to tell stuck claims and ages
   * @return the listener, to pass to {@link IdempotencyGuard.Builder#listener}
   */
  public static MicrometerGuardMetrics bind(MeterRegistry registry, IdempotencyStore store, Clock clock) {
    return bind(registry, store, clock, Duration.ofSeconds(10));
  }

  /**
   * Creates the listener and registers the gauges.
   *
   * @param registry where meters go
   * @param store read by the gauges: the guard's store
   * @param clock the guard's clock, to tell stuck claims and ages
   * @param refresh how long one reading of the store serves the gauges; zero to read at every gauge
   * @return the listener, to pass to {@link IdempotencyGuard.Builder#listener}
   */
  public static MicrometerGuardMetrics bind(MeterRegistry registry, IdempotencyStore store, Clock clock,
      Duration refresh) {
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(refresh, "refresh");
    if (refresh.isNegative()) {
      throw new IllegalArgumentException("refresh must not be negative: " + refresh);
    }
    MicrometerGuardMetrics m = new MicrometerGuardMetrics(registry, Objects.requireNonNull(store, "store"),
        Objects.requireNonNull(clock, "clock"), refresh);
    if (store instanceof JdbcIdempotencyStore jdbc) {
      StorageSizeGauge.register(registry, "guard", jdbc::storageSize);
    }
    gauge(registry, "idem.server.records", "in_flight", m, s -> s.inFlight(), "records in flight");
    gauge(registry, "idem.server.records", "completed", m, s -> s.completed(), "records with a stored result");
    gauge(registry, "idem.server.records", "released", m, s -> s.released(), "records released by a failed run");
    Gauge.builder("idem.server.records.stuck", m, x -> x.read(s -> s.stuck()))
        .description("claims in flight whose lease has expired").strongReference(true).register(registry);
    Gauge.builder("idem.server.inflight.oldest.age", m,
            x -> x.read(s -> s.oldestInFlightAge(x.clock.instant()).toMillis() / 1000.0))
        .description("age of the oldest claim in flight").baseUnit("seconds").strongReference(true).register(registry);
    Gauge.builder("idem.server.records.oldest.age", m,
            x -> x.read(s -> seconds(s.oldestUnexpiredAge(x.clock.instant()))))
        .description("age of the oldest key still within retention").baseUnit("seconds").strongReference(true)
        .register(registry);
    Gauge.builder("idem.server.purge.lag", m, x -> x.read(s -> seconds(s.purgeLag(x.clock.instant()))))
        .description("how long the oldest record past retention has waited for the purge").baseUnit("seconds")
        .strongReference(true).register(registry);
    return m;
  }

  private static double seconds(Duration d) {
    return d.toMillis() / 1000.0;
  }

  private static void gauge(MeterRegistry registry, String name, String state, MicrometerGuardMetrics m,
      ToDoubleFunction<RecordStats> f, String description) {
    Gauge.builder(name, m, x -> x.read(f)).tag("state", state).description(description).strongReference(true)
        .register(registry);
  }

  private synchronized double read(ToDoubleFunction<RecordStats> f) {
    Instant now = clock.instant();
    if (readAt == null || !now.isBefore(readAt.plus(refresh))) {
      readAt = now;
      try {
        stats = store.stats(now);
        failed = false;
      } catch (RuntimeException e) {
        failed = true;
        LOG.debug("a guard gauge could not read the store: {}", e.toString());
      }
    }
    return failed || stats == null ? Double.NaN : f.applyAsDouble(stats);
  }

  @Override
  public void replayed(String route) {
    replays.increment();
  }

  @Override
  public void conflict(String route) {
    conflicts.increment();
  }

  @Override
  public void waited(String route, Duration waited, boolean served) {
    (served ? waitsServed : waitsConflict).record(waited);
  }

  @Override
  public void mismatch(String route) {
    mismatches.increment();
  }

  @Override
  public void takeover(String route) {
    takeovers.increment();
  }

  @Override
  public void purged(int records) {
    purged.increment(records);
  }

  @Override
  public void purgeFailed(Throwable failure) {
    purgeFailures.increment();
  }

  @Override
  public void recovered(int claims) {
    recovered.increment(claims);
  }
}
