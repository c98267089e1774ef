package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A processDue handler that close() interrupts after its grace but that returns normally (it
 * finishes its work anyway, the interrupt status set again, as a well-behaved blocking call
 * leaves it; or its return came just before the interrupt landed): its outcome is its own (DONE),
 * and the interrupt close() made is taken back before the outcome is recorded, so the app's
 * thread gets none back from processDue.
 */
class CloseCutProcessDueHandlerReturnsNormallyTest extends InboxOnVirtualClock {

  @Test
  void theInterruptCloseMadeIsTakenBackWhenTheHandlerReturnsNormally() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("report.build", e -> {
          entered.countDown();
          try {
            new CountDownLatch(1).await(); // until close() interrupts it
          } catch (InterruptedException cut) {
            Thread.currentThread().interrupt();  // finishes its work anyway, the status kept
          }
        })
        .closeGrace(Duration.ofMillis(20)).clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_1", "report.build");
    time.advance(Duration.ofMillis(1));

    ProcessDueThread app = new ProcessDueThread(() -> p.processDue(1)).start();
    assertTrue(entered.await(30, TimeUnit.SECONDS), "the handler started");
    p.close();

    assertEquals(1, app.ran());
    InboxEntry after = inbox.find("acme", "evt_1").orElseThrow();
    assertEquals(InboxState.DONE, after.state(), "the handler returned normally: its outcome is its own");
    assertEquals(1, after.attempts());
    assertFalse(app.interruptedAfter(), "the interrupt close() made was taken back");
  }
}
