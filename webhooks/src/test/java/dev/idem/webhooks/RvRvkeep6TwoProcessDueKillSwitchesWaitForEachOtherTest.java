package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Review (rvkeep6) of d6ed53f0: two handlers run by processDue on two of the app's threads that
 * both call close() (the kill switch, documented for processDue handlers) wait for each other for
 * the whole closeGrace (10 s by default; here 1 h). The first close() now waits in
 * {@code awaitPoll} for the other thread's processDue call (counted in {@code polls}); the other
 * close() is not the first, and is not recognised as a handler's ({@code runs.callerIsRunning()}
 * knows only the workers' runs), so it goes into {@code awaitClosed}, waiting for the first
 * close() to finish, which waits for it. close()'s Javadoc: "A later call from a handler returns at
 * once (the other close() waits for its run)". Both app threads hang for the grace, the first
 * close() then logs that handlers were left running, and stops renewing the other's lease.
 *
 * <p>Where: {@code WebhookProcessor.close()} ({@code fromHandler} is false for a processDue
 * handler, so {@code awaitClosed}), against {@code awaitWorkers}' new {@code awaitPoll} in the
 * {@code w == null} branch.
 */
class RvRvkeep6TwoProcessDueKillSwitchesWaitForEachOtherTest extends InboxOnVirtualClock {

  @Test
  void twoProcessDueHandlersClosingAtOnceDoNotWaitOutTheGrace() throws Exception {
    CountDownLatch bothRunning = new CountDownLatch(2);
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor[] p = new WebhookProcessor[1];
    p[0] = WebhookProcessor.builder(inbox)
        .handler("shutdown.now", e -> {
          bothRunning.countDown();
          bothRunning.await(); // both handlers are running, each on its app thread
          p[0].close();        // the kill switch, hit by both
        })
        .closeGrace(Duration.ofHours(1)).clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_1", "shutdown.now");
    deliver(receiver, time, "evt_2", "shutdown.now");
    time.advance(Duration.ofMillis(1));

    Thread a = new Thread(() -> p[0].processDue(1), "app-driver-a");
    Thread b = new Thread(() -> p[0].processDue(1), "app-driver-b");
    a.start();
    b.start();
    try {
      // Both end (each handler's close() returns), or one waits in awaitClosed for the other's close().
      while ((a.isAlive() || b.isAlive()) && !ThreadFrames.parkedIn(a, "awaitClosed")
          && !ThreadFrames.parkedIn(b, "awaitClosed")) {
        Thread.onSpinWait();
      }
      boolean deadlocked = ThreadFrames.parkedIn(a, "awaitClosed") || ThreadFrames.parkedIn(b, "awaitClosed");
      assertFalse(deadlocked, "a handler's close() while another handler's close() is under way must return at once;"
          + " instead it waits in awaitClosed for the first close(), which waits in awaitPoll for this handler's"
          + " processDue call: both app threads hang for the whole closeGrace (1 h)"
          + " (a in awaitPoll: " + ThreadFrames.parkedIn(a, "awaitPoll") + ", b in awaitPoll: "
          + ThreadFrames.parkedIn(b, "awaitPoll") + ")");
    } finally {
      a.interrupt();
      b.interrupt();
      a.join(TimeUnit.SECONDS.toMillis(30));
      b.join(TimeUnit.SECONDS.toMillis(30));
    }
  }
}
