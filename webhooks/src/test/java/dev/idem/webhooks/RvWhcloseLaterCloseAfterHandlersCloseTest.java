package dev.idem.webhooks;

import static dev.idem.webhooks.ThreadFrames.awaitEndedOrWaiting;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (rv-whclose): a handler may call close() (a kill switch); its own close() waits for the
 * other runs only, and returns while its own run goes on. Whoever closes the processor next (the
 * app's main in a try-with-resources, the Spring context's shutdown destroying the processor bean
 * and then the inbox bean) gets a close() that returns at once ("a call made after the first one
 * finished returns at once"), although the kill-switch handler's run has not recorded its outcome
 * yet. The caller's next step, closing the inbox, then happens under that run: the handler
 * returned successfully, but DONE is never written; the event stays PROCESSING, is voided at the
 * next open as a run the process died during, and its handler runs again (a duplicate effect),
 * the very thing {@link ReviewSecondCloseReturnsEarlyTest} fixed for a second close() during the
 * first one, left open when the first close() came from a handler.
 *
 * <p>Expected: a close() from outside the workers returns only once every run on them has ended
 * and recorded its outcome (bounded as close() documents), the closing handler's included.
 *
 * <p>Fake clock and scheduler. The handler's run is held after its handler returned, at the
 * processor's next clock reading on that thread (as {@link CloseJudgesEachRunByItsOwnInterruptTest}
 * holds one), so the outcome is written after the later close() either returned (the defect) or
 * was seen parked waiting for it (thread state, no sleep).
 */
class RvWhcloseLaterCloseAfterHandlersCloseTest {
  @TempDir
  Path dir;

  @Test
  void aLaterCloseWaitsForTheRunOfTheHandlerThatClosedTheProcessor() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    HoldingClock clock = new HoldingClock(time.clock());
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<Thread> worker = new AtomicReference<>();
    AtomicInteger runs = new AtomicInteger();
    CountDownLatch stopRequested = new CountDownLatch(1);
    WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("app.stop", e -> {
          runs.incrementAndGet();
          worker.set(Thread.currentThread());
          self.get().close(); // the kill switch: stop consuming (no other run: returns at once)
          stopRequested.countDown(); // tells main to shut the app down
          // The handler returns successfully; its run is held at the processor's next clock
          // reading on this thread (just before it writes DONE).
          clock.holdNextReadingOn(Thread.currentThread());
        })
        .workers(2).clock(clock).scheduler(time.scheduler()).owner("p1").closeGrace(Duration.ofHours(1))
        .build();
    self.set(p);
    deliver(receiver, time, "evt_stop", "app.stop");
    p.start();
    time.runDueTasks();
    assertTrue(stopRequested.await(30, TimeUnit.SECONDS), "the kill switch ran");
    assertTrue(clock.held.await(30, TimeUnit.SECONDS), "the handler returned; its run is about to record DONE");

    // main: processor.close(), then inbox.close() (try-with-resources order).
    Thread mainClose = new Thread(p::close, "main-close");
    mainClose.start();
    awaitEndedOrWaiting(mainClose); // returned (the defect), or waits for the run (as expected)
    boolean returnedUnderTheRun = mainClose.getState() == Thread.State.TERMINATED;
    if (returnedUnderTheRun) {
      inbox.close(); // main's next step
    }
    clock.release.release(); // the run records its outcome
    mainClose.join(30_000);
    assertFalse(mainClose.isAlive(), "close() returned");
    worker.get().join(30_000);
    assertFalse(worker.get().isAlive(), "the worker left");
    if (!returnedUnderTheRun) {
      inbox.close();
    }

    try (WebhookInbox reopened = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      InboxEntry entry = reopened.find("acme", "evt_stop").orElseThrow();
      HandlerAttempt last = reopened.attempts("acme", "evt_stop").get(0);
      assertEquals(InboxState.DONE, entry.state(), "the kill-switch handler returned successfully, and main's"
          + " close() returned " + (returnedUnderTheRun ? "before" : "after") + " its run recorded that; actual: "
          + entry.state() + ", its run recorded as '" + last.outcome().orElse("") + "' / '"
          + last.decision().orElse("") + "', to be run again");
    }
    assertEquals(1, runs.get());
  }
}
