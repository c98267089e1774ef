package dev.idem.webhooks.metrics;

import dev.idem.webhooks.WebhookActivity;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.storage.StorageSizeGauge;
import dev.idem.storage.StoreGauges;
import dev.idem.webhooks.WebhookListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The three numbers seed 001 asks to watch (queue length, processing delay, dead letters) and the
 * rejections by reason. Give it to the receiver and the processor as their listener:
 *
 * <pre>{@code
 * MicrometerWebhookMetrics metrics = MicrometerWebhookMetrics.bind(registry, inbox);
 * WebhookReceiver.builder(source, inbox).listener(metrics).build();
 * WebhookProcessor.builder(inbox).listener(metrics)...
 * }</pre>
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@code idem.webhooks.inbox.queue}</td><td>gauge</td><td></td><td>events PENDING or
 *       PROCESSING (the queue length)</td></tr>
 *   <tr><td>{@code idem.webhooks.inbox.oldest.age}</td><td>gauge, seconds</td><td></td><td>how long the
 *       oldest queued event has waited</td></tr>
 *   <tr><td>{@code idem.webhooks.deadletters}</td><td>gauge</td><td></td><td>dead letters in the inbox</td></tr>
 *   <tr><td>{@code idem.webhooks.processing.delay}</td><td>timer</td><td>source</td><td>from acceptance
 *       to the successful end of the handler</td></tr>
 *   <tr><td>{@code idem.webhooks.accepted}</td><td>counter</td><td>source</td><td>new events stored</td></tr>
 *   <tr><td>{@code idem.webhooks.duplicates}</td><td>counter</td><td>source</td><td>redeliveries of known
 *       events</td></tr>
 *   <tr><td>{@code idem.webhooks.rejections}</td><td>counter</td><td>source, reason</td><td>refused
 *       deliveries: header, signature, timestamp, replay, too-large</td></tr>
 *   <tr><td>{@code idem.webhooks.retries}</td><td>counter</td><td>source</td><td>handler retries scheduled</td></tr>
 *   <tr><td>{@code idem.webhooks.deadlettered}</td><td>counter</td><td>source</td><td>events that became
 *       dead letters</td></tr>
 * </table>
 *
 * <p>Tags are the configured source names and the fixed reasons, never request data, so the number
 * of meters stays bounded. The queue, age and dead-letter gauges share one reading of the inbox,
 * taken at most once per {@code refresh} (10 s by default) however many gauges, scrapes and
 * registries read them. A reading is one count of the queued and dead events
 * ({@link WebhookInbox#counts(java.util.Set)}, which never reads the DONE events kept for
 * deduplication) and the oldest queued event (the first entry of an index). A count still reads
 * every queued event, and on an embedded inbox it runs on the connection that accepts deliveries:
 * with a backlog of a million events, a refresh holds accepts back for tens of milliseconds, once
 * per {@code refresh} rather than per gauge and scrape. Within a refresh the counts are as of its
 * reading and the age grows with the clock. If the inbox fails, the gauges read NaN until the next
 * refresh ({@code idem.storage.size} measures files or asks PostgreSQL at each read, as for the
 * other stores). Thread-safe.
 */
public final class MicrometerWebhookMetrics implements WebhookListener {
  private static final Logger LOG = LoggerFactory.getLogger(MicrometerWebhookMetrics.class);

  private static final List<String> GAUGES = List.of("idem.webhooks.inbox.queue", "idem.webhooks.inbox.oldest.age",
      "idem.webhooks.deadletters");

  private final MeterRegistry registry;
  private final WebhookInbox inbox;
  private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();
  private final Duration refresh;
  // Guarded by this: the gauges of one scrape, and of concurrent scrapes, share one reading.
  private InboxReading reading;
  private Instant readAt;

  private MicrometerWebhookMetrics(MeterRegistry registry, WebhookInbox inbox, Duration refresh) {
    this.registry = registry;
    this.inbox = inbox;
    this.refresh = refresh;
  }

  /**
   * Creates the listener and registers the inbox gauges, which read the inbox every 10 s at most.
   *
   * @param registry where meters go
   * @param inbox read by the gauges
   * @return the listener
   */
  public static MicrometerWebhookMetrics bind(MeterRegistry registry, WebhookInbox inbox) {
    return bind(registry, inbox, Duration.ofSeconds(10));
  }

  /**
   * Creates the listener and registers the inbox gauges. Bound again on the same registry (an inbox
   * closed and reopened), the gauges read the inbox of the last bind.
   *
   * @param registry where meters go
   * @param inbox read by the gauges; its clock times the refresh and the age
   * @param refresh how long one reading of the inbox serves the gauges; zero to read at every gauge.
   *     A reading also ends when the inbox's clock steps back
   * @return the listener
   * @throws IllegalArgumentException if {@code refresh} is negative
   */
  public static MicrometerWebhookMetrics bind(MeterRegistry registry, WebhookInbox inbox, Duration refresh) {
    Objects.requireNonNull(refresh, "refresh");
    if (refresh.isNegative()) {
      throw new IllegalArgumentException("refresh must not be negative: " + refresh);
    }
    MicrometerWebhookMetrics m = new MicrometerWebhookMetrics(Objects.requireNonNull(registry, "registry"),
        Objects.requireNonNull(inbox, "inbox"), refresh);
    // Micrometer hands back a gauge already registered under the same name, still reading the
    // inbox it was bound to: an inbox closed and reopened, bound again, would go unread (NaN).
    for (String gauge : GAUGES) {
      StoreGauges.unbind(registry, gauge);
    }
    Gauge.builder("idem.webhooks.inbox.queue", m, x -> x.read(InboxReading::queued))
        .description("webhook events PENDING or PROCESSING").strongReference(true).register(registry);
    Gauge.builder("idem.webhooks.inbox.oldest.age", m, x -> x.read(r -> r.oldestAgeSeconds(x.inbox.clock().instant())))
        .description("how long the oldest queued webhook event has waited").baseUnit("seconds")
        .strongReference(true).register(registry);
    Gauge.builder("idem.webhooks.deadletters", m, x -> x.read(InboxReading::dead))
        .description("webhook dead letters").strongReference(true).register(registry);
    StorageSizeGauge.register(registry, "inbox", inbox::storageSize);
    return m;
  }

  /** {@code f} of the current reading, taken now if the last one is older than the refresh; NaN if it failed. */
  private synchronized double read(ToDoubleFunction<InboxReading> f) {
    Instant now = inbox.clock().instant();
    // A reading ends one refresh later, or as soon as the clock steps back (StoreGauges.stale).
    if (readAt == null || StoreGauges.stale(readAt, now, refresh)) {
      readAt = now;
      try {
        reading = InboxReading.of(inbox, now);
      } catch (RuntimeException e) {
        reading = null;
        LOG.debug("a webhook inbox gauge could not read the inbox: {}", e.toString());
      }
    }
    return reading == null ? Double.NaN : f.applyAsDouble(reading);
  }

  @Override
  public void onEvent(WebhookActivity activity) {
    if (activity instanceof WebhookActivity.Accepted a) {
      counter("idem.webhooks.accepted", a.source(), null).increment();
    } else if (activity instanceof WebhookActivity.Duplicate d) {
      counter("idem.webhooks.duplicates", d.source(), null).increment();
    } else if (activity instanceof WebhookActivity.Rejected r) {
      counter("idem.webhooks.rejections", r.source(), r.reason().tag()).increment();
    } else if (activity instanceof WebhookActivity.Processed p) {
      timers.computeIfAbsent(p.source(), s -> Timer.builder("idem.webhooks.processing.delay").tag("source", s)
          .description("from acceptance to the successful end of the handler").register(registry)).record(p.delay());
    } else if (activity instanceof WebhookActivity.RetryScheduled r) {
      counter("idem.webhooks.retries", r.source(), null).increment();
    } else if (activity instanceof WebhookActivity.DeadLettered d) {
      counter("idem.webhooks.deadlettered", d.source(), null).increment();
    }
  }

  private Counter counter(String name, String source, String reason) {
    return counters.computeIfAbsent(name + '\0' + source + '\0' + reason, k -> {
      Counter.Builder b = Counter.builder(name).tag("source", source);
      if (reason != null) {
        b.tag("reason", reason);
      }
      return b.register(registry);
    });
  }
}
