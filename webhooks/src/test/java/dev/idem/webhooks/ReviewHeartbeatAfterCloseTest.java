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
 * Review (b1790773): the LeaseHeartbeat renews on the processor's scheduler, and nothing stops it
 * at close(). With a scheduler the app gave ({@code Builder.scheduler}, which the processor does
 * not shut down), a handler that ignores close()'s interrupt (a socket read without a timeout, a
 * loop that swallows InterruptedException) keeps its lease renewed for as long as the JVM lives.
 * close() promises "one whose handler ignores the interrupt runs again when its lease ends", and
 * WebhookHandler "holds its event ... until the processor closes": instead, no other processor
 * (the replacement built after a context refresh, another instance) ever gets the event.
 *
 * <p>Fake clock and scheduler (the renewals run on the test thread); the worker is a real thread,
 * waited for on latches and joined, never a sleep. close() waits up to 5 s of real time for the
 * interrupted handler to end ({@code CLOSE_HAND_BACK_WAIT}), which this one never does: instead of
 * waiting them out, the test interrupts the closing thread once close() is seen in that wait (its
 * thread state and stack), which ends the wait as close() documents for an interrupted caller, and
 * stops the renewals on the same path (shutDown's finally) as a wait that ran out.
 */
class ReviewHeartbeatAfterCloseTest {
  @TempDir
  Path dir;

  @Test
  void aClosedProcessorKeepsRenewingTheLeaseOfAHandlerThatIgnoredTheInterrupt() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch interrupted = new CountDownLatch(1);
    CountDownLatch unblock = new CountDownLatch(1);
    AtomicReference<Thread> worker = new AtomicReference<>();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p1 = WebhookProcessor.builder(inbox)
          .handler("report.build", e -> {
            worker.set(Thread.currentThread());
            entered.countDown();
            boolean done = false;
            while (!done) { // a call that does not answer to interrupts
              try {
                done = unblock.await(1, TimeUnit.DAYS);
              } catch (InterruptedException ignored) {
                // swallowed, as a blocking socket read effectively does
                interrupted.countDown();
              }
            }
          })
          .lease(Duration.ofMinutes(1)).closeGrace(Duration.ZERO).clock(time.clock()).scheduler(time.scheduler())
          .owner("p1").build();
      try {
        p1.start();
        deliver(receiver, time, "evt_1", "report.build");
        time.runDueTasks();
        assertTrue(entered.await(30, TimeUnit.SECONDS), "the handler started");

        // Grace zero: close() interrupts the handler at once; it ignores the interrupt, and close()
        // waits for it (bounded), then stops the renewals. Its wait is cut short here (see above).
        Thread closing = new Thread(p1::close, "close");
        closing.start();
        assertTrue(interrupted.await(30, TimeUnit.SECONDS), "close() interrupted the handler");
        while (!parkedIn(closing, "awaitTermination")) {
          assertTrue(closing.isAlive(), "close() waits for the interrupted handler before it returns");
          Thread.onSpinWait();
        }
        closing.interrupt();
        closing.join(30_000);
        assertFalse(closing.isAlive(), "close() returned");

        time.advance(Duration.ofMinutes(30)); // thirty leases after the close

        WebhookProcessor p2 = WebhookProcessor.builder(inbox).handler("report.build", e -> { })
            .lease(Duration.ofMinutes(1)).clock(time.clock()).owner("p2").build();
        int ran = p2.processDue(1);
        p2.close();
        assertEquals(1, ran, "30 min after p1 closed, its 1-minute lease must have ended and another processor run"
            + " the event, as close() promises; actual: still PROCESSING under p1, state "
            + inbox.find("acme", "evt_1").orElseThrow().state() + ", renewed by p1's heartbeat on the app's"
            + " scheduler after close (" + time.pendingTasks() + " task(s) still scheduled)");
      } finally {
        unblock.countDown();
        Thread w = worker.get();
        if (w != null) {
          w.join(TimeUnit.SECONDS.toMillis(30));
        }
      }
    }
  }
}
