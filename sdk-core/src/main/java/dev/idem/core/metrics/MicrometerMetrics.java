package dev.idem.core.metrics;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.event.IdemListener;
import dev.idem.core.IdempotencyException;
import dev.idem.core.spi.Journal;
import dev.idem.core.OperationState;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes Idem's events and queue state to Micrometer. Register it as the executor's listener
 * (combine it with others through {@link IdemListener#all}):
 *
 * <pre>{@code
 * MicrometerMetrics metrics = MicrometerMetrics.bind(registry, journal, clock);
 * IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(clock).listener(metrics).build();
 * }</pre>
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@code idem.operations.pending}</td><td>gauge</td><td></td><td>PENDING operations in the
 *       journal (the queue length)</td></tr>
 *   <tr><td>{@code idem.operations.pending.oldest.age}</td><td>gauge, seconds</td><td></td><td>age of the
 *       oldest PENDING operation; 0 when there is none</td></tr>
 *   <tr><td>{@code idem.operation.duration}</td><td>timer</td><td>operation, outcome</td><td>time from
 *       journaling to SUCCEEDED, FAILED or UNCERTAIN</td></tr>
 *   <tr><td>{@code idem.operation.attempts}</td><td>distribution summary</td><td>operation, outcome</td>
 *       <td>attempts per finished operation</td></tr>
 *   <tr><td>{@code idem.retries}</td><td>counter</td><td>operation</td><td>retries scheduled</td></tr>
 *   <tr><td>{@code idem.replays}</td><td>counter</td><td>operation</td><td>responses the server marked as
 *       replays</td></tr>
 *   <tr><td>{@code idem.key.mismatches}</td><td>counter</td><td>operation, detected.by</td><td>a key
 *       reused with another payload ({@code client} before sending, {@code server} on 422)</td></tr>
 *   <tr><td>{@code idem.operations.uncertain}</td><td>counter</td><td>operation</td><td>operations that
 *       ended UNCERTAIN</td></tr>
 *   <tr><td>{@code idem.operations.failed}</td><td>counter</td><td>operation</td><td>operations that ended
 *       FAILED (dead letters)</td></tr>
 *   <tr><td>{@code idem.budget.denials}</td><td>counter</td><td>operation</td><td>retries held back by an
 *       empty retry budget</td></tr>
 *   <tr><td>{@code idem.breaker.rejections}</td><td>counter</td><td>operation</td><td>attempts held back by
 *       an open circuit breaker</td></tr>
 *   <tr><td>{@code idem.breaker.transitions}</td><td>counter</td><td>to ({@code OPEN}, {@code HALF_OPEN},
 *       {@code CLOSED})</td><td>circuit breaker state changes, of all hosts; which host changed is in the
 *       {@link IdemEvent.BreakerStateChanged} event (for a listener that logs it), not in a tag</td></tr>
 * </table>
 *
 * <p>Meters are tagged by operation name, never by key, scope or anything from a request (not even
 * the host: an app may call an unbounded number of callback hosts), so their number stays bounded by
 * the number of operation names. The gauges query the journal when they are
 * read ({@link Journal#count} and {@link Journal#oldestCreatedAt}); if it fails they read NaN.
 * Thread-safe.
 */
public final class MicrometerMetrics implements IdemListener {
  private static final Logger LOG = LoggerFactory.getLogger(MicrometerMetrics.class);
  private static final List<String> GAUGES = List.of("idem.operations.pending", "idem.operations.pending.oldest.age");

  private final MeterRegistry registry;
  private final Journal journal;
  private final Clock clock;
  private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();

  private MicrometerMetrics(MeterRegistry registry, Journal journal, Clock clock) {
    this.registry = registry;
    this.journal = journal;
    this.clock = clock;
  }

  /**
   * Creates the listener and registers the two queue gauges on {@code registry}. Bound again on the
   * same registry (a journal closed and reopened, or replaced), the gauges read the journal of the
   * last bind.
   *
   * @param registry where meters go
   * @param journal the executor's journal, read by the gauges
   * @param clock the executor's clock, for the age of the oldest pending operation
   * @return the listener to give to {@code IdempotentExecutor.Builder#listener}
   * @throws NullPointerException if any argument is null
   */
  public static MicrometerMetrics bind(MeterRegistry registry, Journal journal, Clock clock) {
    MicrometerMetrics m = new MicrometerMetrics(Objects.requireNonNull(registry, "registry"),
        Objects.requireNonNull(journal, "journal"), Objects.requireNonNull(clock, "clock"));
    // Micrometer hands back a gauge already registered under the same name, still reading (and
    // holding) the journal it was bound to: a journal closed and reopened, bound again, would go
    // unread. Removed as StorageSizeGauge and the other binders do; their helper lives in the
    // storage module, above this one, hence these few lines of its own.
    for (String gauge : GAUGES) {
      registry.find(gauge).gauges().forEach(registry::remove);
    }
    Gauge.builder("idem.operations.pending", m, MicrometerMetrics::pending)
        .description("PENDING operations in the journal").strongReference(true).register(registry);
    Gauge.builder("idem.operations.pending.oldest.age", m, MicrometerMetrics::oldestPendingAgeSeconds)
        .description("age of the oldest PENDING operation").baseUnit("seconds").strongReference(true)
        .register(registry);
    return m;
  }

  @Override
  public void onEvent(IdemEvent event) {
    if (event instanceof IdemEvent.Succeeded e) {
      finished(e.id().operation(), "succeeded", e.attempts(), e.sinceCreation());
    } else if (event instanceof IdemEvent.Failed e) {
      finished(e.id().operation(), "failed", e.attempts(), e.sinceCreation());
      count("idem.operations.failed", e.id().operation());
    } else if (event instanceof IdemEvent.Uncertain e) {
      finished(e.id().operation(), "uncertain", e.attempts(), e.sinceCreation());
      count("idem.operations.uncertain", e.id().operation());
    } else if (event instanceof IdemEvent.RetryScheduled e) {
      count("idem.retries", e.id().operation());
    } else if (event instanceof IdemEvent.ReplaySeen e) {
      count("idem.replays", e.id().operation());
    } else if (event instanceof IdemEvent.KeyMismatch e) {
      counter("idem.key.mismatches", "operation", e.id().operation(), "detected.by",
          e.detectedByServer() ? "server" : "client").increment();
    } else if (event instanceof IdemEvent.BudgetDenied e) {
      count("idem.budget.denials", e.id().operation());
    } else if (event instanceof IdemEvent.BreakerRejected e) {
      count("idem.breaker.rejections", e.id().operation());
    } else if (event instanceof IdemEvent.BreakerStateChanged e) {
      // Not tagged by host: breakers are per host, and HostGuard is built for an unbounded stream of
      // them (per-customer callback URLs), while a meter, once registered, is never dropped.
      counter("idem.breaker.transitions", "to", e.to()).increment();
    }
  }

  private void finished(String operation, String outcome, int attempts, Duration sinceCreation) {
    Timer.builder("idem.operation.duration").description("time from journaling to a terminal state")
        .tags("operation", operation, "outcome", outcome).register(registry).record(sinceCreation);
    DistributionSummary.builder("idem.operation.attempts").description("attempts per finished operation")
        .tags("operation", operation, "outcome", outcome).register(registry).record(attempts);
  }

  private void count(String name, String operation) {
    counter(name, "operation", operation).increment();
  }

  private Counter counter(String name, String... tags) {
    String cacheKey = name + '\u0000' + String.join("\u0000", tags);
    return counters.computeIfAbsent(cacheKey, k -> Counter.builder(name).tags(tags).register(registry));
  }

  private double pending() {
    try {
      return journal.count(OperationState.PENDING);
    } catch (IdempotencyException | RuntimeException e) {
      LOG.debug("could not count pending operations: {}", e.toString());
      return Double.NaN;
    }
  }

  private double oldestPendingAgeSeconds() {
    try {
      Optional<Instant> oldest = journal.oldestCreatedAt(OperationState.PENDING);
      return oldest.map(t -> Math.max(0, Duration.between(t, clock.instant()).toNanos() / 1e9)).orElse(0.0);
    } catch (IdempotencyException | RuntimeException e) {
      LOG.debug("could not read the oldest pending operation: {}", e.toString());
      return Double.NaN;
    }
  }
}
