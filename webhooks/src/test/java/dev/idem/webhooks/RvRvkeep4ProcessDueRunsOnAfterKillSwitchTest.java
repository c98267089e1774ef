package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Review (rvkeep4), the processDue() path: a handler that calls its processor's close() (the kill
 * switch the Javadoc of close() describes: "A handler may call close() (a kill switch, a handler
 * that stops consuming)") while the app drives processing with {@code processDue(max)} (no
 * start()) does not stop the call it runs in. processDue's loop never looks at {@code closed}: it
 * claims and runs the next due event right after the kill switch, and the events after it, on a
 * processor whose heartbeat close() has already ended (no lease renewal for them: a run longer
 * than the lease is then run beside itself by another processor) and whose own scheduler it shut
 * down. close() "stops claiming"; here it claims on. Not new in 9de0832e (processDue never checked
 * it), but it is the documented kill switch on the documented app-driven path: an app that stops
 * consuming on a bad event goes on consuming the rest of the batch.
 *
 * <p>Here: two events due, the first one's handler calls close(); processDue(10) should run only
 * it, and leave the second PENDING for the next processor.
 */
class RvRvkeep4ProcessDueRunsOnAfterKillSwitchTest extends InboxOnVirtualClock {
  @Test
  void aKillSwitchInProcessDueStopsTheCallItRunsIn() {
    List<String> ran = new CopyOnWriteArrayList<>();
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("app.stop", e -> {
          ran.add(e.eventId());
          self.get().close(); // the kill switch
        })
        .handler("order.paid", e -> ran.add(e.eventId()))
        .clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    self.set(p);

    deliver(receiver, time, "evt_stop", "app.stop");
    time.advance(Duration.ofMillis(1));
    deliver(receiver, time, "evt_next", "order.paid");
    time.advance(Duration.ofMillis(1));

    int n = p.processDue(10);

    assertEquals(List.of("evt_stop"), ran, "processDue ran events after its handler's close() (the kill switch);"
        + " it returned " + n + ", and evt_next is " + inbox.find("acme", "evt_next").map(InboxEntry::state).orElse(null));
    assertEquals(InboxState.PENDING, inbox.find("acme", "evt_next").orElseThrow().state(),
        "the event after the kill switch stays for the next processor");
  }
}
