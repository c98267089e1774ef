package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Review (rpd), afa39dcf "close() waits for, renews, cuts short and hands back processDue runs":
 * processDue lists its thread in WorkerRuns ({@code enterDue}) before each claim, and the entry
 * stays with {@code handlerEnded == false} for the whole time no handler has run yet or none will
 * (the claim itself, the hand-back of a claim that found the processor closed, a dead letter
 * recorded without a handler: no handler for the type, a damaged payload, attempts exhausted).
 * {@code WorkerRuns.cutShort()} (close() past its grace, or an interrupted close()) interrupts
 * every listed thread whose run is not marked handler-ended, so it interrupts the APP's thread
 * while it is inside the processor's own code with no handler running, and processDue then returns
 * to the app with the interrupt status set: the app's next blocking call (its own work, not the
 * processor's) fails with an InterruptedException it never asked for. Before this commit close()
 * never interrupted a processDue thread. processDue's Javadoc promises "the call returns with the
 * interrupt status its handler left", and close()'s: it "interrupts those [handlers] still
 * running"; here no handler ran at all.
 *
 * <p>Here: an event of a type with no handler (processDue dead-letters it); the app's thread is
 * held (HoldingClock, the existing seam, uninterruptibly) at the clock reading of that dead-letter
 * write; close() is called from another thread with a short grace, waits its grace out, cuts the
 * runs short and returns (after its bounded hand-back wait); the app's thread is let go. Expected:
 * processDue returns with the app thread's interrupt status clear.
 */
class RvRpdCloseInterruptsProcessDueThreadNoHandlerRanTest extends InboxOnVirtualClock {

  @Test
  void processDueReturnsWithoutAnInterruptWhenNoHandlerOfItsRan() throws Exception {
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    HoldingClock clock = new HoldingClock(time.clock());
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("order.paid", e -> { })  // no handler for "report.build": a dead letter, no handler runs
        .closeGrace(Duration.ofMillis(20)).clock(clock).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_1", "report.build");
    time.advance(Duration.ofMillis(1));

    ProcessDueThread app = new ProcessDueThread(() -> p.processDue(1));
    // Hold the app's thread at the clock reading of the dead-letter write (WebhookProcessor.dead):
    // inside processDue, no handler running.
    clock.holdNextReadingIn(app.thread, "dead");
    app.start();
    assertTrue(clock.held.await(30, TimeUnit.SECONDS), "processDue reached the dead-letter write");

    p.close(); // the app's shutdown, on another thread: grace out, cut, bounded hand-back wait, returns
    clock.release.release();

    assertEquals(1, app.ran(), "processDue dead-lettered its one event");
    assertEquals(InboxState.DEAD, inbox.find("acme", "evt_1").orElseThrow().state());
    assertFalse(app.interruptedAfter(),
        "processDue returned to the app with its thread interrupted by close(), though no handler of it ran");
  }
}
