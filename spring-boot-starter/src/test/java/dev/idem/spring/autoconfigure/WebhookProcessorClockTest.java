package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
import dev.idem.spring.webhooks.WebhookSubscription;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.SignatureScheme;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.webhooks.WebhookListener;
import dev.idem.webhooks.WebhookProcessor;
import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.WebhookSource;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * The starter hands the app's {@link Clock} bean to the webhook sources, which stamp each accepted
 * event with it (received, and due at once). The processor must read the same clock: on the system
 * clock instead, an event accepted under a Clock bean ahead of it (a test's pinned time, a clock
 * set for a scenario) is due in the processor's future, and stays PENDING until the system clock
 * gets there.
 */
class WebhookProcessorClockTest {
  static final String SECRET = "whsec_aWRlbS10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm";

  @TempDir
  Path dir;

  @Test
  void anEventAcceptedUnderTheAppsClockBeanIsDueForTheStartersProcessor() {
    VirtualTime time = new VirtualTime(Instant.parse("2100-01-01T00:00:00Z")); // ahead of the system clock
    StaticListableBeanFactory beans = new StaticListableBeanFactory();
    beans.addBean("clock", time.clock());
    AtomicInteger runs = new AtomicInteger();
    beans.addBean("paid", WebhookSubscription.on("order.paid", e -> runs.incrementAndGet()));
    IdemProperties properties = new Binder(new MapConfigurationPropertySource(Map.of("idem.owner", "p1")))
        .bindOrCreate("idem", IdemProperties.class);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) { // as the starter's inbox bean: system clock
      // A source as the starter builds it: on the Clock bean.
      WebhookReceiver receiver = WebhookReceiver.builder(WebhookSource.builder("acme",
          SignatureScheme.standardWebhooks()).secret(SECRET).clock(time.clock()).build(), inbox).build();
      try (WebhookProcessor p = new IdemWebhooksAutoConfiguration().idemWebhookProcessor(inbox,
          beans.getBeanProvider(WebhookSubscription.class), beans.getBeanProvider(WebhookListener.class), properties,
          new StandardEnvironment(), beans.getBeanProvider(Clock.class))) {
        byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
        Map<String, List<String>> h = new TreeMap<>();
        WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "evt_1", "order.paid", time.now(), body)
            .headers().forEach((k, v) -> h.put(k, List.of(v)));
        assertEquals(200, receiver.handle("POST", h, body).status());

        assertEquals(1, p.processDue(10), "the event accepted now, by the app's clock, is due now; state "
            + inbox.find("acme", "evt_1").orElseThrow().state());
        assertEquals(1, runs.get());
        assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state());
      }
    }
  }
}
