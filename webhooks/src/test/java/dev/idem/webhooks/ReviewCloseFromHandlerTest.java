package dev.idem.webhooks;

import static dev.idem.webhooks.ThreadFrames.parkedIn;
import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
 * Review (round 2, 0bebc159): close() waits for the processor's workers to terminate, and a handler
 * is one of them. A handler that stops the processor itself (a kill-switch event, a handler that
 * finds the app misconfigured and stops consuming, a "maintenance" control message) waits out the
 * whole grace for its own run, which cannot end while it waits: with a grace set to match the
 * handlers' longest call (minutes), close() hangs that long for nothing, then interrupts every
 * other handler, which the grace was meant to let finish, and the calling handler itself (its
 * own close() has interrupted it, so its next blocking call fails and the event is handed back
 * instead of being DONE). Nothing says a handler must not call close().
 *
 * <p>Expected: close() from a handler waits for the other runs only, not its own, and returns once
 * they are over (here at once: there are none). Fake clock and scheduler; the grace is an hour. The
 * handler's close() is seen waiting for termination by its thread's state and stack (no sleep), and
 * the worker is then interrupted to end the wait.
 */
class ReviewCloseFromHandlerTest {
  @TempDir
  Path dir;

  @Test
  void aHandlerThatClosesTheProcessorDoesNotWaitOutTheGraceForItself() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<Thread> worker = new AtomicReference<>();
    CountDownLatch closing = new CountDownLatch(1);
    CountDownLatch closed = new CountDownLatch(1);
    AtomicReference<Boolean> interruptedAfter = new AtomicReference<>();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("app.stop", e -> {
            worker.set(Thread.currentThread());
            closing.countDown();
            self.get().close(); // stop consuming
            interruptedAfter.set(Thread.currentThread().isInterrupted());
            closed.countDown();
          })
          .workers(2).clock(time.clock()).scheduler(time.scheduler()).owner("p1").closeGrace(Duration.ofHours(1))
          .build();
      self.set(p);
      deliver(receiver, time, "evt_1", "app.stop");
      p.start();
      time.runDueTasks();
      assertTrue(closing.await(30, TimeUnit.SECONDS), "the handler runs");
      // Either close() returns, or the worker is seen parked in awaitTermination on its own pool
      // (thread state and stack, no sleep).
      boolean returned = false;
      try {
        while (true) {
          if (closed.getCount() == 0) {
            returned = true;
            break;
          }
          Thread w = worker.get();
          if (parkedIn(w, "awaitTermination")) {
            break;
          }
          Thread.onSpinWait();
        }
      } finally {
        worker.get().interrupt(); // ends the wait, if still waiting
        worker.get().join(30_000);
      }
      assertTrue(returned, "close() called by a handler returns once the other handlers are done (none here);"
          + " actual: it waits in awaitTermination for the pool its own run is on, until the grace of 1 h is over");
      assertEquals(false, interruptedAfter.get(), "the handler was not interrupted by its own close()");
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state());
    }
  }
}
