package dev.idem.webhooks;

import static dev.idem.webhooks.ThreadFrames.parkedIn;
import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (rv-whclose): a handler that calls close() (a kill switch) waits in it, uninterrupted by
 * close(), for the other runs to end within the grace. But its own run is still timed by the
 * {@linkplain WebhookProcessor.Builder#maxRunTime maximum run time} while it waits (the watchdog
 * closes only after the waits), and when that limit passes, the watchdog's interrupt (meant for
 * the handler's attempt) lands in close()'s wait, which takes it for "the caller wants close()
 * over now": it stops waiting, interrupts every other handler at once, without the grace it
 * promised them, and returns without waiting for them to hand their events back (the caller's
 * next step closes the inbox under those writes). Here the other handler would have finished
 * within the grace (an hour), successfully; it is interrupted instead and its event handed back
 * to run again.
 *
 * <p>Expected: the processor's own maximum-run-time interrupt does not end close()'s wait; the
 * other run gets its grace and finishes: DONE, run once, never interrupted.
 *
 * <p>Fake clock and scheduler (the watchdog beats every 15 s of a 1 min limit); the kill switch
 * starts two beats before the other handler, so only its own limit passes. Real waits are on
 * latches and thread states, no sleep.
 */
class RvWhcloseWatchdogEndsHandlersCloseTest {
  @TempDir
  Path dir;

  @Test
  void theMaximumRunTimeOfAHandlerWaitingInItsOwnCloseDoesNotCutTheOtherRunsShort() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<Thread> stopWorker = new AtomicReference<>();
    AtomicReference<Thread> slowWorker = new AtomicReference<>();
    CountDownLatch stopRunning = new CountDownLatch(1);
    CountDownLatch goClose = new CountDownLatch(1);
    CountDownLatch closeReturned = new CountDownLatch(1);
    CountDownLatch slowRunning = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    CountDownLatch slowInterrupted = new CountDownLatch(1);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("app.stop", e -> {
            stopWorker.set(Thread.currentThread());
            stopRunning.countDown();
            goClose.await();
            self.get().close(); // the kill switch: waits for the other run, within the grace
            closeReturned.countDown();
          })
          .handler("order.paid", e -> {
            slowWorker.set(Thread.currentThread());
            slowRunning.countDown();
            try {
              finish.await(); // a call that finishes within the grace
            } catch (InterruptedException ex) {
              slowInterrupted.countDown();
              throw ex;
            }
          })
          .workers(2).maxRunTime(Duration.ofMinutes(1)).clock(time.clock()).scheduler(time.scheduler())
          .owner("p1").closeGrace(Duration.ofHours(1)).build();
      self.set(p);
      deliver(receiver, time, "evt_stop", "app.stop");
      p.start();
      time.runDueTasks();
      assertTrue(stopRunning.await(30, TimeUnit.SECONDS), "the kill switch runs");
      time.advance(Duration.ofSeconds(30)); // two watchdog beats
      deliver(receiver, time, "evt_slow", "order.paid");
      time.runDueTasks();
      assertTrue(slowRunning.await(30, TimeUnit.SECONDS), "the other handler runs");

      goClose.countDown();
      Thread stop = stopWorker.get();
      while (!parkedIn(stop, "awaitOthers")) {
        assertTrue(closeReturned.getCount() > 0, "the handler's close() waits for the other run");
        Thread.onSpinWait();
      }
      // 75 s after the kill switch began: its 1 min limit passed (5 beats); the other run began 2
      // beats later and is within its own.
      time.advance(Duration.ofSeconds(45));

      // Either close() returned (the defect: it was ended by the watchdog's interrupt), or it is
      // still waiting for the other run, uninterrupted (thread state, stack and interrupt status).
      while (closeReturned.getCount() > 0 && !(waitingUninterrupted(stop) && waitingUninterrupted(stop))) {
        Thread.onSpinWait();
      }
      boolean closeEndedEarly = closeReturned.getCount() == 0;
      finish.countDown(); // the other handler finishes, within the grace
      assertTrue(closeReturned.await(30, TimeUnit.SECONDS), "close() returned");
      slowWorker.get().join(30_000);
      stop.join(30_000);
      assertFalse(slowWorker.get().isAlive() || stop.isAlive(), "the workers left");

      InboxEntry slow = inbox.find("acme", "evt_slow").orElseThrow();
      HandlerAttempt slowRun = inbox.attempts("acme", "evt_slow").get(0);
      assertEquals(InboxState.DONE, slow.state(), "the other handler would have finished within the grace of 1 h;"
          + " actual: close() " + (closeEndedEarly ? "was ended by the watchdog's interrupt of its caller and" : "")
          + " cut it short: " + slow + ", run recorded as '" + slowRun.outcome().orElse("") + "' / '"
          + slowRun.decision().orElse("") + "'");
      assertEquals(1, slowInterrupted.getCount(), "the other handler was not interrupted");
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_stop").orElseThrow().state());
    }
  }

  private static boolean waitingUninterrupted(Thread t) {
    return !t.isInterrupted() && parkedIn(t, "awaitOthers")
        && !t.isInterrupted();
  }
}
