package dev.idem.webhooks;

import static dev.idem.webhooks.ThreadFrames.in;
import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.webhooks.support.InboxRows;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A poll that had begun when close() was called (it passed the closed check, and claims) may
 * claim an event after close() shut the pool down: the pool refuses it, and the poll hands the
 * event back. close() must not return before that hand-back, since the app's next step is to
 * close the inbox: the write then fails, and the event, which never ran, stays PROCESSING under
 * its lease, and is counted at the next open as a run the process died during.
 *
 * <p>The poll runs on a thread of the test's (the fake scheduler runs it where it is asked to),
 * held by a {@link HoldingClock} first at its reading of the time before it claims, then at the
 * reading before it writes the hand-back; close() is seen waiting by its thread's state, no sleep.
 */
class CloseDuringPollTest {
  @TempDir
  Path dir;

  @Test
  void closeReturnsOnlyAfterAPollUnderWayHandedBackWhatItClaimed() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    HoldingClock clock = new HoldingClock(time.clock());
    AtomicInteger ran = new AtomicInteger();
    CountDownLatch closeReturned = new CountDownLatch(1);
    Semaphore closeInbox = new Semaphore(0);
    WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("order.paid", e -> ran.incrementAndGet())
        .workers(1).pollInterval(Duration.ofHours(1)).clock(clock).scheduler(time.scheduler()).owner("p1")
        .closeGrace(Duration.ofHours(1)).build();
    deliver(receiver, time, "evt_1", "order.paid");
    p.start(); // its first poll is due now, on the fake scheduler
    Thread poller = new Thread(time::runDueTasks, "poller");
    clock.holdNextReadingOn(poller);
    poller.start();
    assertTrue(clock.holds.tryAcquire(30, TimeUnit.SECONDS), "the poll began, and is about to claim");

    // The app: closes the processor, then (told to by the test, at the worst moment) the inbox.
    Thread app = new Thread(() -> {
      p.close();
      closeReturned.countDown();
      closeInbox.acquireUninterruptibly();
      inbox.close();
    }, "app");
    app.start();
    awaitReturnedOrWaiting(app, closeReturned);
    clock.holdNextReadingOn(poller); // the next: just before it writes the hand-back
    clock.release.release();
    assertTrue(clock.holds.tryAcquire(30, TimeUnit.SECONDS), "the poll claimed the event, and hands it back");
    closeInbox.release(); // if close() returned: the inbox's turn
    awaitClosedOrWaiting(app);
    boolean returnedBeforeHandBack = closeReturned.getCount() == 0;
    clock.release.release();
    poller.join(30_000);
    app.join(30_000);
    assertFalse(poller.isAlive() || app.isAlive(), "the poll and the app's close finished");

    try (WebhookInbox reopened = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      InboxEntry entry = reopened.find("acme", "evt_1").orElseThrow();
      assertEquals(InboxState.PENDING, entry.state(), entry.toString());
      assertEquals(0, entry.attempts(), "never run, handed back uncounted: " + entry);
      assertEquals("none", InboxRows.leaseHolder(dir, "acme", "evt_1"));
      assertEquals(0, ran.get(), "the event did not run");
      assertFalse(returnedBeforeHandBack, "close() returned while a poll under way still held a claimed event");
    }
  }

  /** Until close() has returned, or is seen parked in its wait for the poll under way. */
  private static void awaitReturnedOrWaiting(Thread app, CountDownLatch returned) {
    while (returned.getCount() > 0 && !waitingForPoll(app)) {
      assertTrue(app.isAlive(), "the app's close() runs");
      Thread.onSpinWait();
    }
  }

  /** Until the app has closed the processor and the inbox, or close() is seen parked as above. */
  private static void awaitClosedOrWaiting(Thread app) {
    while (app.isAlive() && !waitingForPoll(app)) {
      Thread.onSpinWait();
    }
  }

  private static boolean waitingForPoll(Thread app) {
    Thread.State s = app.getState();
    return (s == Thread.State.TIMED_WAITING || s == Thread.State.WAITING) && in(app, "awaitPoll");
  }
}
