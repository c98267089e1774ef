package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Review (rvkeep5), a0e2bc53 "processDue() claims nothing once close() was called": the check is a
 * read of {@code closed} at the top of processDue's loop, not ordered with the claim that follows
 * it, and close() neither waits for a processDue call under way nor hands back what it claims
 * (as it does for a poll: {@code polls} counts polls, close() waits for them, and an event a poll
 * claims after close() goes back to PENDING before close() returns). So an app that drives
 * processing with processDue on its own thread and closes the processor from another one (its
 * shutdown) sees close() return, and then processDue claim and run a handler: on a processor whose
 * lease renewals close() has already ended (a run longer than the lease is then run beside itself
 * elsewhere), and after which the app closes the inbox under the run. docs/webhooks.md: "close()
 * stops claiming (... a processDue call claims nothing more ...)"; processDue's Javadoc: "Once
 * close() was called ..., it claims nothing more".
 *
 * <p>Here: the processDue thread is held (HoldingClock, the existing seam) at its clock reading
 * between the closed check and the claim; close() is called on the test thread and returns; the
 * processDue thread is let go. Expected: no handler runs, the event stays PENDING, processDue
 * returns 0.
 */
class RvRvkeep5ProcessDueClaimsAfterCloseReturnedTest extends InboxOnVirtualClock {
  @Test
  void processDueClaimsNothingAfterCloseReturned() throws Exception {
    List<String> ran = new CopyOnWriteArrayList<>();
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    HoldingClock clock = new HoldingClock(time.clock());
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("order.paid", e -> ran.add(e.eventId()))
        .clock(clock).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_1", "order.paid");
    time.advance(Duration.ofMillis(1));

    // processDue reads the clock twice before its first claim: dueBy, then (after the closed
    // check) the claim's "now". Hold the second.
    AtomicInteger readings = new AtomicInteger();
    CompletableFuture<Thread> driver = new CompletableFuture<>();
    clock.holdNextReadingOn(th -> th == driver.getNow(null) && readings.incrementAndGet() == 2);
    CompletableFuture<Integer> processed = CompletableFuture.supplyAsync(() -> {
      driver.complete(Thread.currentThread());
      return p.processDue(1);
    });
    clock.held.await();

    p.close(); // the app's shutdown, on another thread: returns (it does not wait for processDue)
    clock.release.release();
    int n = processed.get(30, TimeUnit.SECONDS);

    assertEquals(List.of(), ran, "processDue ran a handler after close() had returned (it returned " + n
        + "; evt_1 is " + inbox.find("acme", "evt_1").map(InboxEntry::state).orElse(null) + ")");
    assertEquals(InboxState.PENDING, inbox.find("acme", "evt_1").orElseThrow().state(),
        "the event stays for the next processor");
  }
}
