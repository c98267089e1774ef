package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.metrics.MicrometerWebhookMetrics;
import dev.idem.core.testing.VirtualTime;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The seed's three numbers (queue length, processing delay, dead letters) and rejections by reason. */
class MetricsTest {
  static final String SECRET = ReceiverTest.SECRET;

  @TempDir
  Path dir;

  @Test
  void queueDelayDeadLettersAndRejectionsAreMeasured() {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    java.time.Clock clock = time.clock();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(clock).open()) {
      MicrometerWebhookMetrics metrics = MicrometerWebhookMetrics.bind(registry, inbox);
      WebhookReceiver r = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
          .secret(SECRET).clock(clock).build(), inbox).listener(metrics).build();
      WebhookDelivery ok = sign("evt_ok", "ok");
      WebhookDelivery bad = sign("evt_bad", "bad");
      post(r, ok);
      post(r, ok);  // replay
      post(r, ok.tampered());
      post(r, bad);
      time.advance(Duration.ofSeconds(3));

      assertEquals(2.0, registry.get("idem.webhooks.inbox.queue").gauge().value());
      assertEquals(3.0, registry.get("idem.webhooks.inbox.oldest.age").gauge().value());

      WebhookProcessor.builder(inbox).listener(metrics).handler("ok", e -> { })
          .handler("bad", e -> {
            throw new PermanentWebhookException("invalid");
          }).build().processDue(10);
      time.advance(Duration.ofSeconds(10));  // the gauges' refresh: the next scrape reads the inbox again

      assertEquals(0.0, registry.get("idem.webhooks.inbox.queue").gauge().value());
      assertEquals(1.0, registry.get("idem.webhooks.deadletters").gauge().value());
      assertEquals(1.0, registry.get("idem.webhooks.deadlettered").counter().count());
      assertEquals(2.0, registry.get("idem.webhooks.accepted").counter().count());
      assertEquals(1.0, registry.get("idem.webhooks.rejections").tag("reason", "replay").counter().count());
      assertEquals(1.0, registry.get("idem.webhooks.rejections").tag("reason", "signature").counter().count());
      assertEquals(1, registry.get("idem.webhooks.processing.delay").timer().count());
      assertEquals(3000.0, registry.get("idem.webhooks.processing.delay").timer().totalTime(TimeUnit.MILLISECONDS));
    }
  }

  private WebhookDelivery sign(String id, String type) {
    return WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, id, type, ReceiverTest.T0, WebhookSigner.jsonEvent(id, type, "{}"));
  }

  private static void post(WebhookReceiver r, WebhookDelivery d) {
    Map<String, List<String>> h = new TreeMap<>();
    d.headers().forEach((k, v) -> h.put(k, List.of(v)));
    r.handle("POST", h, d.body());
  }
}
