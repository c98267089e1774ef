package dev.idem.server.metrics;

import dev.idem.server.GuardEvent;
import dev.idem.server.GuardListener;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.RecordStats;
import dev.idem.storage.StorageSizeGauge;
import dev.idem.storage.StoreGauges;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The numbers seed 000 asks to watch on the server: records by state, the oldest unexpired key,
 * the purge lag, the age of the oldest claim in flight (processing age), stuck claims (lease
 * expired: alert on these rather than delete them), key conflicts, payload mismatches, takeovers,
 * processing time and results that could not be stored (unknown outcomes), waits, replays and
 * purges. Give it to the guard as its listener (several listeners: {@link GuardListener#all}):
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
 *   <tr><td>{@code idem.server.processing}</td><td>timer</td><td>result ({@code stored},
 *       {@code released}, {@code refused})</td><td>how long claims were held, from the claim to their end
 *       (processing time); {@code refused}: the lease was lost, or the store retries of a failed
 *       completion were given up, and the handler's result not stored, so its outcome is unknown to a
 *       retry: alert on these during a store outage</td></tr>
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
  private static final List<String> GAUGES = List.of("idem.server.records", "idem.server.records.stuck",
      "idem.server.inflight.oldest.age", "idem.server.records.oldest.age", "idem.server.purge.lag");

  private final MeterRegistry registry;
  private final IdempotencyStore store;
  private final Clock clock;
  private final Duration refresh;
  private final Map<Class<? extends GuardEvent>, Counter> counters = new HashMap<>();
  private final Timer waitsServed;
  private final Timer waitsConflict;
  private final Map<CompletionResult, Timer> processing = new EnumMap<>(CompletionResult.class);
  private RecordStats stats;
  private Instant readAt;
  private boolean failed;

  private MicrometerGuardMetrics(MeterRegistry registry, IdempotencyStore store, Clock clock, Duration refresh) {
    this.registry = registry;
    this.store = store;
    this.clock = clock;
    this.refresh = refresh;
    count(GuardEvent.Conflict.class, "idem.server.conflicts",
        "repeats answered 409 because their key was in flight");
    count(GuardEvent.Mismatch.class, "idem.server.mismatches", "idempotency keys reused with another payload");
    count(GuardEvent.Takeover.class, "idem.server.takeovers", "claims that took over an expired claim");
    count(GuardEvent.Recovered.class, "idem.server.recovered", "claims of a dead earlier run ended at start");
    count(GuardEvent.Replayed.class, "idem.server.replays", "stored results replayed");
    count(GuardEvent.Purged.class, "idem.server.purged", "records past retention deleted");
    count(GuardEvent.PurgeFailed.class, "idem.server.purge.failures", "background purges that failed");
    this.waitsServed = Timer.builder("idem.server.waits").tag("outcome", "served")
        .description("repeats that waited for the first request").register(registry);
    this.waitsConflict = Timer.builder("idem.server.waits").tag("outcome", "conflict")
        .description("repeats that waited for the first request").register(registry);
    for (CompletionResult r : CompletionResult.values()) {
      processing.put(r, Timer.builder("idem.server.processing").tag("result", r.name().toLowerCase(Locale.ROOT))
          .description("how long claims were held, from the claim to their end").register(registry));
    }
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
   * Creates the listener and registers the gauges. Bound again on the same registry (a store closed
   * and reopened, or replaced), the gauges read the store of the last bind.
   *
   * @param registry where meters go
   * @param store read by the gauges: the guard's store
   * @param clock the guard's clock, to tell stuck claims and ages
   * @param refresh how long one reading of the store serves the gauges; zero to read at every gauge.
   *     A reading also ends when the clock steps back
   * @return the listener, to pass to {@link IdempotencyGuard.Builder#listener}
   * @throws IllegalArgumentException if {@code refresh} is negative
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
    // Micrometer hands back a gauge already registered under the same name and tags, still reading
    // (and holding) the store it was bound to: a store closed and reopened, bound again, would go unread.
    for (String gauge : GAUGES) {
      StoreGauges.unbind(registry, gauge);
    }
    m.gauge("idem.server.records", "in_flight", s -> s.inFlight(), "records in flight");
    m.gauge("idem.server.records", "completed", s -> s.completed(), "records with a stored result");
    m.gauge("idem.server.records", "released", s -> s.released(), "records released by a failed run");
    m.gauge("idem.server.records.stuck", null, s -> s.stuck(), "claims in flight whose lease has expired");
    m.ageGauge("idem.server.inflight.oldest.age", RecordStats::oldestInFlightAge, "age of the oldest claim in flight");
    m.ageGauge("idem.server.records.oldest.age", RecordStats::oldestUnexpiredAge,
        "age of the oldest key still within retention");
    m.ageGauge("idem.server.purge.lag", RecordStats::purgeLag,
        "how long the oldest record past retention has waited for the purge");
    return m;
  }

  private void count(Class<? extends GuardEvent> event, String name, String description) {
    counters.put(event, Counter.builder(name).description(description).register(registry));
  }

  /** A gauge of one reading of the store, tagged with {@code state} unless it is null. */
  private void gauge(String name, String state, ToDoubleFunction<RecordStats> f, String description) {
    Gauge.Builder<MicrometerGuardMetrics> b = Gauge.builder(name, this, x -> x.read(f)).description(description)
        .strongReference(true);
    (state == null ? b : b.tag("state", state)).register(registry);
  }

  /** A gauge, in seconds, of an age the store's reading gives at the guard's now. */
  private void ageGauge(String name, BiFunction<RecordStats, Instant, Duration> age, String description) {
    Gauge.builder(name, this, x -> x.read(s -> age.apply(s, x.clock.instant()).toMillis() / 1000.0))
        .description(description).baseUnit("seconds").strongReference(true).register(registry);
  }

  private synchronized double read(ToDoubleFunction<RecordStats> f) {
    Instant now = clock.instant();
    // A reading ends one refresh later, or as soon as the clock steps back: else a wall clock
    // stepped back an hour would freeze every gauge for that hour (StoreGauges.stale).
    if (readAt == null || StoreGauges.stale(readAt, now, refresh)) {
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
  public void onEvent(GuardEvent event) {
    if (event instanceof GuardEvent.Waited e) {
      (e.served() ? waitsServed : waitsConflict).record(e.waited());
    } else if (event instanceof GuardEvent.Completed e) {
      processing.get(e.result()).record(e.processing());
    } else {
      // A purge counts the records it deleted, a recovery the claims it ended; any other event counts once.
      Counter counter = counters.get(event.getClass());
      if (counter != null) {
        counter.increment(event instanceof GuardEvent.Purged p ? p.records()
            : event instanceof GuardEvent.Recovered r ? r.claims() : 1);
      }
    }
  }
}
