package dev.idem.webhooks.metrics;

import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.WebhookActivity;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.storage.StorageSizeGauge;
import dev.idem.webhooks.WebhookListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
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
 * of meters stays bounded. The gauges query the inbox when read; if it fails they read NaN.
 * Thread-safe.
 */
public final class MicrometerWebhookMetrics implements WebhookListener {
  private static final Logger LOG = LoggerFactory.getLogger(MicrometerWebhookMetrics.class);

  private final MeterRegistry registry;
  private final WebhookInbox inbox;
  private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();

  private MicrometerWebhookMetrics(MeterRegistry registry, WebhookInbox inbox) {
    this.registry = registry;
    this.inbox = inbox;
  }

  /**
   * Creates the listener and registers the inbox gauges.
   *
   * @param registry where meters go
   * @param inbox read by the gauges
   * @return the listener
   */
  public static MicrometerWebhookMetrics bind(MeterRegistry registry, WebhookInbox inbox) {
    MicrometerWebhookMetrics m = new MicrometerWebhookMetrics(Objects.requireNonNull(registry, "registry"),
        Objects.requireNonNull(inbox, "inbox"));
    Gauge.builder("idem.webhooks.inbox.queue", m, x -> x.safely(() -> (double) x.inbox.queueLength()))
        .description("webhook events PENDING or PROCESSING").strongReference(true).register(registry);
    Gauge.builder("idem.webhooks.inbox.oldest.age", m,
            x -> x.safely(() -> x.inbox.oldestWaiting().toMillis() / 1000.0))
        .description("how long the oldest queued webhook event has waited").baseUnit("seconds")
        .strongReference(true).register(registry);
    Gauge.builder("idem.webhooks.deadletters", m, x -> x.safely(() -> (double) x.inbox.counts().get(InboxState.DEAD)))
        .description("webhook dead letters").strongReference(true).register(registry);
    StorageSizeGauge.register(registry, "inbox", inbox::storageSize);
    return m;
  }

  private double safely(java.util.function.DoubleSupplier read) {
    try {
      return read.getAsDouble();
    } catch (RuntimeException e) {
      LOG.debug("a webhook inbox gauge could not read the inbox: {}", e.toString());
      return Double.NaN;
    }
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
