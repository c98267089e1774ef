package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bound on runs without an outcome (WebhookProcessor.MAX_UNRECORDED_RUNS): exactly at it, and
 * started over by a re-drive. Each "death" is a claim whose run never ends, under a new owner, as
 * after a crash. Fake clock; no threads.
 */
class ProcessorUnrecordedRunsTest {
  private static final Duration LEASE = Duration.ofMinutes(5);

  @TempDir
  Path dir;

  @Test
  void nineDeathsRunAgainTheTenthDeadLettersAndARedriveStartsOver() {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    AtomicInteger handed = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      accept(inbox, time, "evt_a");
      accept(inbox, time, "evt_b");
      int deaths = 0;
      for (int i = 0; i < WebhookProcessor.MAX_UNRECORDED_RUNS - 1; i++) {
        deaths = die(inbox, time, deaths);
      }
      WebhookProcessor p = WebhookProcessor.builder(inbox).handler("invoice.created", e -> handed.incrementAndGet())
          .clock(time.clock()).owner("survivor").build();
      assertEquals(2, p.processDue(2));
      assertEquals(2, handed.get(), "9 deaths: still run");
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_a").orElseThrow().state());

      accept(inbox, time, "evt_c");
      for (int i = 0; i < WebhookProcessor.MAX_UNRECORDED_RUNS; i++) {
        deaths = die(inbox, time, deaths);
      }
      assertEquals(1, p.processDue(1));
      assertEquals(2, handed.get(), "10 deaths: not handed to the handler again");
      assertEquals(InboxState.DEAD, inbox.find("acme", "evt_c").orElseThrow().state());

      inbox.redrive("acme", "evt_c");
      time.advance(Duration.ofSeconds(1));
      assertEquals(1, p.processDue(1));
      assertEquals(3, handed.get(), "a re-drive starts the count over: the event runs");
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_c").orElseThrow().state());
      p.close();
    }
  }

  private static int die(WebhookInbox inbox, VirtualTime time, int deaths) {
    long now = time.now().toEpochMilli();
    inbox.store().claim(1, "webhooks-" + deaths + "-crashed", now, now + LEASE.toMillis());
    time.advance(LEASE.plusSeconds(1));
    return deaths + 1;
  }

  private static void accept(WebhookInbox inbox, VirtualTime time, String id) {
    WebhookReceiver receiver = receiver(inbox, time);
    deliver(receiver, time, id, "invoice.created");
  }
}
