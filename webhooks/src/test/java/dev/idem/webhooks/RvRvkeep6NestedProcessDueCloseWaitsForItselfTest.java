package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Review (rvkeep6) of d6ed53f0: a processDue call made inside a handler that processDue runs (a
 * handler that drains what is due, or a listener that does) leaves the outer call's thread out of
 * {@code dueCallers}: the set holds each thread once, but {@code polls} counts each call, and the
 * inner call's {@code finally} removes the thread from the set while the outer call is still under
 * way. When the outer handler then calls close() (the kill switch, documented for a processDue
 * handler: "a handler's close() also stops the processDue it runs in"), {@code awaitPoll} no longer
 * recognises the caller's own call ({@code polls} is 1, and the thread is not in the set) and
 * waits for it, that is for itself, the whole closeGrace (10 s by default; here 1 h): the
 * handler, and the app's thread, hang for the grace, and the event's outcome waits as long. The
 * same happens to a close() inside the inner call (polls 2, only 1 left out).
 *
 * <p>Where: {@code WebhookProcessor.processDue} ({@code dueCallers.add/remove}, a Set) and
 * {@code awaitPoll} ({@code polls > (dueCallers.contains(current) ? 1 : 0)}).
 */
class RvRvkeep6NestedProcessDueCloseWaitsForItselfTest extends InboxOnVirtualClock {

  @Test
  void aHandlersCloseAfterANestedProcessDueDoesNotWaitForItself() throws Exception {
    AtomicInteger followUps = new AtomicInteger();
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor[] p = new WebhookProcessor[1];
    p[0] = WebhookProcessor.builder(inbox)
        .handler("batch.start", e -> {
          p[0].processDue(10); // runs the follow-up event now, on this thread
          p[0].close();        // then the kill switch
        })
        .handler("batch.item", e -> followUps.incrementAndGet())
        .closeGrace(Duration.ofHours(1)).clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_1", "batch.start");
    time.advance(Duration.ofMillis(1));
    deliver(receiver, time, "evt_2", "batch.item");
    time.advance(Duration.ofMillis(1));

    int[] ran = new int[1];
    Thread driver = new Thread(() -> ran[0] = p[0].processDue(1), "app-driver");
    driver.start();
    try {
      // Ends (the handler's close() returned at once: nothing else runs), or parks in close()'s
      // wait for the polls or for the runs (processDue's runs are waited for with the workers').
      while (driver.getState() != Thread.State.TERMINATED && !ThreadFrames.parkedIn(driver, "awaitPoll")
          && !ThreadFrames.parkedIn(driver, "awaitOthers")) {
        Thread.onSpinWait();
      }
      assertFalse(ThreadFrames.parkedIn(driver, "awaitPoll") || ThreadFrames.parkedIn(driver, "awaitOthers"),
          "the handler's close() after a nested processDue call must not wait for the processDue call it is itself"
          + " in; it is parked in close()'s wait for the whole closeGrace (1 h), the app's thread hung with it");
      driver.join();
      assertEquals(1, ran[0], "the outer call ran its event");
      assertEquals(1, followUps.get(), "the nested call ran the follow-up");
    } finally {
      driver.interrupt(); // ends awaitPoll's wait if it hangs
      driver.join(30_000);
    }
  }
}
