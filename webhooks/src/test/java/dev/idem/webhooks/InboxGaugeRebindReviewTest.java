package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.metrics.MicrometerWebhookMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An app that closes its inbox and opens it again (a restart of its webhook component, a Spring
 * context refreshed on a shared registry) and binds the metrics to the new inbox: the gauges must
 * read the inbox that is open.
 */
class InboxGaugeRebindReviewTest {
  @TempDir
  Path dir;

  @Test
  void gaugesBoundToAReopenedInboxReadIt() {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    Clock clock = time.clock();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (WebhookInbox first = WebhookInbox.sqlite(dir).clock(clock).open()) {
      MicrometerWebhookMetrics.bind(registry, first);
      assertEquals(0.0, registry.get("idem.webhooks.inbox.queue").gauge().value());
    }
    try (WebhookInbox second = WebhookInbox.sqlite(dir).clock(clock).open()) {
      MicrometerWebhookMetrics metrics = MicrometerWebhookMetrics.bind(registry, second);
      WebhookReceiver r = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
          .secret(ReceiverTest.SECRET).clock(clock).build(), second).listener(metrics).build();
      WebhookDelivery d = WebhookSigner.STANDARD_WEBHOOKS.sign(ReceiverTest.SECRET, "evt_1", "ok", ReceiverTest.T0,
          WebhookSigner.jsonEvent("evt_1", "ok", "{}"));
      Map<String, List<String>> h = new TreeMap<>();
      d.headers().forEach((k, v) -> h.put(k, List.of(v)));
      r.handle("POST", h, d.body());
      assertEquals(1, second.queueLength(), "the delivery is queued in the open inbox");
      time.advance(java.time.Duration.ofSeconds(10));
      assertEquals(1.0, registry.get("idem.webhooks.inbox.queue").gauge().value(),
          "bind on the reopened inbox returned normally, but the queue gauge still reads the closed one");
    }
  }
}
