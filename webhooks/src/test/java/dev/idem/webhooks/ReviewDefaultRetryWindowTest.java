package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review: with the default retry policy ("10 attempts, 1 s doubling to 10 min, full jitter, within
 * 24 h", docs/webhooks.md's Defaults) an event whose handler's downstream is down gets its ten
 * attempts within at most 511 s (1 + 2 + ... + 256 s of backoff, even with the longest jitter), and
 * becomes a dead letter. Neither the 10 min cap nor the 24 h deadline is ever reached. So an outage
 * of the service a handler calls that lasts longer than about 8 minutes (a deploy, an hour-long
 * incident) dead-letters every webhook received during it, each to be re-driven by hand, although
 * the sender itself would have retried for days.
 *
 * <p>Fake clock; processDue on the test thread; the jitter source gives its largest value.
 */
class ReviewDefaultRetryWindowTest {
  @TempDir
  Path dir;

  @Test
  void anEventOutlivesAnHourLongOutageOfItsHandlersDownstreamWithTheDefaultPolicy() {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    Instant recovers = ReceiverTest.T0.plus(Duration.ofHours(1));
    AtomicInteger runs = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            runs.incrementAndGet();
            if (time.now().isBefore(recovers)) {
              throw new java.net.ConnectException("fulfilment service: connection refused");
            }
          })
          .random(() -> 0.999_999).owner("p1").build(); // default policy, longest backoff it can draw
      deliver(receiver, time, "evt_1");
      for (int minute = 0; minute <= 120; minute++) {
        p.processDue(10);
        time.advance(Duration.ofMinutes(1));
      }
      InboxEntry entry = inbox.find("acme", "evt_1").orElseThrow();
      assertEquals(InboxState.DONE, entry.state(), "the event runs once its handler's downstream is back after an"
          + " hour; actual: " + entry.state() + " after " + runs.get() + " runs, the last decision '"
          + inbox.attempts("acme", "evt_1").get(runs.get() - 1).decision().orElse("") + "' at "
          + Duration.between(ReceiverTest.T0, inbox.attempts("acme", "evt_1").get(runs.get() - 1).startedAt())
          + " after the first");
    }
  }
}
