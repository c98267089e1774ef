package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A processDue run that close() (from another thread) cuts short after its grace, while the run
 * has claimed its event but its handler has not started yet, never starts the handler: the event
 * goes back to PENDING unrun, its attempt not counted, and the app's thread is not interrupted (no
 * handler of it was running). Before, close() interrupted the thread there, and the handler then
 * started after close() had returned.
 */
class CloseBeforeProcessDueHandlerStartsTest extends InboxOnVirtualClock {

  @Test
  void aRunCutBeforeItsHandlerStartedHandsItsEventBackUnrun() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    HoldingClock clock = new HoldingClock(time.clock());
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("report.build", e -> runs.incrementAndGet())
        // a short grace that must run out: a bound, nothing waits on real time for a race
        .closeGrace(Duration.ofMillis(20)).clock(clock).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_1", "report.build");
    time.advance(Duration.ofMillis(1));

    ProcessDueThread app = new ProcessDueThread(() -> p.processDue(1));
    // Held at the first clock reading of the run (when its handler is about to start): claimed,
    // listed, no handler running.
    clock.holdNextReadingIn(app.thread, "runClaimed");
    app.start();
    assertTrue(clock.held.await(30, TimeUnit.SECONDS), "the run claimed its event");

    p.close(); // grace out, cut, bounded hand-back wait, returns
    clock.release.release();

    assertEquals(0, app.ran(), "no event ran");
    assertEquals(0, runs.get(), "the handler did not start after close() had cut the run short");
    InboxEntry after = inbox.find("acme", "evt_1").orElseThrow();
    assertEquals(InboxState.PENDING, after.state(), "handed back unrun");
    assertEquals(0, after.attempts(), "its attempt not counted");
    assertFalse(app.interruptedAfter(), "no handler ran: close() did not interrupt the thread");
  }
}
