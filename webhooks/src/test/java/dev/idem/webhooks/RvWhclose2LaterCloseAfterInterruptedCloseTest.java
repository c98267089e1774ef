package dev.idem.webhooks;

import static dev.idem.webhooks.ThreadFrames.awaitEndedOrWaiting;
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
 * Review (rv-whclose2) of cc479d7a: a later close() from outside the workers now waits for the
 * pool only if the first close() was a handler's. The first close() may also have stopped waiting
 * early for another reason its Javadoc names: its caller was interrupted ("stops waiting and keeps
 * its interrupt status"; e.g. a JUnit preemptive timeout, an executor's shutdownNow, a handler of
 * another processor whose maximum run time passed). That close() cuts the runs short and returns at
 * once, without the 5 s hand-back wait; the runs it interrupted are still handing their events
 * back. A later close() (main's try-with-resources, the Spring context) then returns at once too,
 * and the inbox closed next loses the hand-back: the event stays PROCESSING and is voided at the
 * next open as a run the process died during (a counted attempt without an outcome), instead of
 * going back PENDING uncounted as close() promises for a run it cut short.
 *
 * <p>Expected (close()'s Javadoc: a later call "waits for that one to finish ... so that whoever
 * closes the inbox next does not close it under a run still recording its outcome"): the later
 * close() waits, bounded, for the cut run's hand-back.
 *
 * <p>Fake clock and scheduler; the cut run is held at its next clock reading after its handler
 * threw (just before it writes the hand-back); thread states, no sleep.
 */
class RvWhclose2LaterCloseAfterInterruptedCloseTest {
  @TempDir
  Path dir;

  @Test
  void aLaterCloseWaitsForTheHandBackOfTheRunsAnInterruptedFirstCloseCutShort() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    HoldingClock clock = new HoldingClock(time.clock());
    AtomicReference<Thread> worker = new AtomicReference<>();
    CountDownLatch running = new CountDownLatch(1);
    WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("order.paid", e -> {
          worker.set(Thread.currentThread());
          running.countDown();
          try {
            new CountDownLatch(1).await(); // a long call; close() cuts it short
          } catch (InterruptedException ex) {
            // Unwinds; the run is held at its next clock reading, before it hands the event back.
            clock.holdNextReadingOn(Thread.currentThread());
            throw ex;
          }
        })
        .workers(1).clock(clock).scheduler(time.scheduler()).owner("p1").closeGrace(Duration.ofHours(1))
        .build();
    deliver(receiver, time, "evt_1");
    p.start();
    time.runDueTasks();
    assertTrue(running.await(30, TimeUnit.SECONDS), "the handler runs");

    // A first close() whose caller is interrupted while it waits through the grace.
    Thread first = new Thread(p::close, "first-close");
    first.start();
    while (!parkedIn(first, "awaitTermination")) {
      assertTrue(first.isAlive(), "the first close() waits for the run");
      Thread.onSpinWait();
    }
    first.interrupt();
    first.join(30_000);
    assertFalse(first.isAlive(), "the interrupted close() stopped waiting");
    assertTrue(clock.held.await(30, TimeUnit.SECONDS), "the cut run is about to hand its event back");

    // main: processor.close(), then inbox.close() (try-with-resources order).
    Thread mainClose = new Thread(p::close, "main-close");
    mainClose.start();
    awaitEndedOrWaiting(mainClose); // returned (the defect), or waits for the run (as expected)
    boolean returnedUnderTheRun = mainClose.getState() == Thread.State.TERMINATED;
    if (returnedUnderTheRun) {
      inbox.close(); // main's next step
    }
    clock.release.release(); // the run hands its event back
    mainClose.join(30_000);
    assertFalse(mainClose.isAlive(), "close() returned");
    worker.get().join(30_000);
    if (!returnedUnderTheRun) {
      inbox.close();
    }

    try (WebhookInbox reopened = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      InboxEntry entry = reopened.find("acme", "evt_1").orElseThrow();
      HandlerAttempt last = reopened.attempts("acme", "evt_1").get(0);
      String seen = "main's close() returned " + (returnedUnderTheRun ? "before" : "after")
          + " the cut run handed its event back; actual: " + entry + ", its run recorded as '"
          + last.outcome().orElse("") + "' / '" + last.decision().orElse("") + "'";
      assertEquals(InboxState.PENDING, entry.state(), seen);
      assertEquals(0, entry.attempts(), "a run close() cut short is not counted: " + seen);
      assertEquals("interrupted", last.outcome().orElse(""), seen);
    }
  }
}
