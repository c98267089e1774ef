package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.webhooks.WebhookSubscription;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.SignatureScheme;
import dev.idem.webhooks.WebhookActivity;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.webhooks.WebhookListener;
import dev.idem.webhooks.WebhookProcessor;
import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.WebhookSource;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * {@code idem.webhooks.max-run-time} binds (default 15 minutes, the processor's) and reaches the
 * starter's processor: a handler that hangs is interrupted once it passes, and its run counts as a
 * failed attempt. The processor runs on its own threads here, as the starter builds it; the test
 * waits on latches, never a sleep.
 */
class WebhookProcessorMaxRunTimeTest {
  static final String SECRET = WebhookProcessorClockTest.SECRET;

  @TempDir
  Path dir;

  @Test
  void theDefaultIsTheProcessors() {
    IdemProperties properties = new Binder(new MapConfigurationPropertySource(Map.of("idem.owner", "p1")))
        .bindOrCreate("idem", IdemProperties.class);
    assertEquals(WebhookProcessor.DEFAULT_MAX_RUN_TIME, properties.webhooks().maxRunTime());
  }

  @Test
  void theStartersProcessorInterruptsAHandlerThatRunsLongerThanMaxRunTime() throws Exception {
    CountDownLatch interrupted = new CountDownLatch(1);
    CountDownLatch retryScheduled = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    StaticListableBeanFactory beans = new StaticListableBeanFactory();
    beans.addBean("hangs", WebhookSubscription.on("order.paid", e -> {
      try {
        never.await(); // a call without a timeout
      } catch (InterruptedException ex) {
        interrupted.countDown();
        throw ex;
      }
    }));
    beans.addBean("listener", (WebhookListener) a -> {
      if (a instanceof WebhookActivity.RetryScheduled) {
        retryScheduled.countDown();
      }
    });
    IdemProperties properties = new Binder(new MapConfigurationPropertySource(Map.of("idem.owner", "p1",
        "idem.webhooks.max-run-time", "50ms"))).bindOrCreate("idem", IdemProperties.class);
    assertEquals(Duration.ofMillis(50), properties.webhooks().maxRunTime());
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookReceiver receiver = WebhookReceiver.builder(WebhookSource.builder("acme",
          SignatureScheme.standardWebhooks()).secret(SECRET).build(), inbox).build();
      try (WebhookProcessor p = new IdemWebhooksAutoConfiguration().idemWebhookProcessor(inbox,
          beans.getBeanProvider(WebhookSubscription.class), beans.getBeanProvider(WebhookListener.class), properties,
          new StandardEnvironment(), beans.getBeanProvider(Clock.class))) {
        byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
        Map<String, List<String>> h = new TreeMap<>();
        WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "evt_1", "order.paid", Instant.now(), body)
            .headers().forEach((k, v) -> h.put(k, List.of(v)));
        assertEquals(200, receiver.handle("POST", h, body).status());
        p.start();
        assertTrue(interrupted.await(30, TimeUnit.SECONDS), "the hanging handler was interrupted after 50 ms");
        assertTrue(retryScheduled.await(30, TimeUnit.SECONDS), "the run counted as a failed attempt, retried");
        assertTrue(inbox.attempts("acme", "evt_1").get(0).error().orElse("").contains("maximum run time of PT0.05S"));
      }
    }
  }
}
