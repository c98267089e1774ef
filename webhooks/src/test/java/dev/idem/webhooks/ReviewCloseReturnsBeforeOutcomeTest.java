package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review: {@link WebhookProcessor#close()} interrupts the handlers still running after its grace
 * and returns at once, without waiting for the interrupted runs to end and record their outcome.
 * close() promises that such an event "goes back to PENDING, due at once, its attempt not counted"
 * (cutByClose / InboxStore.release). But that write happens on the worker after close() returned,
 * and what an app does right after close() is close the inbox: try-with-resources in the
 * quickstart's order, or the Spring starter (IdemLifecycle.stop closes the processor, then the
 * context destroys the inbox bean). Any handler that takes a moment to unwind (a rollback, a
 * finally block, a connection closed on the interrupt) finds the inbox closed: the hand-back is
 * lost ("could not record the outcome ... runs again when its lease ends"), the event stays
 * PROCESSING, and at the next open the run is recorded as "the process died during the run":
 * counted as an attempt and as one of the 10 unrecorded runs that dead-letter an event. On
 * PostgreSQL the event stays leased for the rest of its lease (5 min) instead of being due at once
 * for the other instances.
 *
 * <p>Fake clock and scheduler; close grace zero. The handler's unwinding is held on a semaphore,
 * standing in for any cleanup, and let go once close() is seen waiting (its thread state): close()
 * waits a bounded time for it, so a cleanup held until after the inbox closed could not be waited
 * for by any bounded close(). The worker is joined, no sleep.
 */
class ReviewCloseReturnsBeforeOutcomeTest {
  @TempDir
  Path dir;

  @Test
  void closeWaitsForTheInterruptedRunToHandItsEventBack() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    CountDownLatch running = new CountDownLatch(1);
    Semaphore unwind = new Semaphore(0);
    AtomicReference<Thread> worker = new AtomicReference<>();
    WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("order.paid", e -> {
          worker.set(Thread.currentThread());
          running.countDown();
          try {
            new CountDownLatch(1).await(); // a slow call when the app is stopped
          } finally {
            unwind.acquireUninterruptibly(); // its cleanup: a rollback, a connection closed
          }
        })
        .workers(1).clock(time.clock()).scheduler(time.scheduler()).owner("p1").closeGrace(Duration.ZERO).build();
    deliver(receiver, time, "evt_1");
    p.start();
    time.runDueTasks();
    assertTrue(running.await(30, TimeUnit.SECONDS), "the handler runs");

    // The app stops, as the quickstart's try-with-resources or the Spring context does: close(),
    // then the inbox. The handler unwinds while close() is still running (seen waiting by its
    // thread state, no sleep); a close() that returned without waiting fails here.
    Thread closing = new Thread(p::close, "close");
    closing.start();
    while (closing.getState() != Thread.State.TIMED_WAITING) {
      assertTrue(closing.isAlive(), "close() returned before the interrupted run handed its event back");
      Thread.onSpinWait();
    }
    unwind.release();
    closing.join(30_000);
    inbox.close();
    worker.get().join(30_000);

    try (WebhookInbox reopened = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      InboxEntry entry = reopened.find("acme", "evt_1").orElseThrow();
      List<HandlerAttempt> runs = reopened.attempts("acme", "evt_1");
      assertEquals(0, entry.attempts(), "close() cut the run short: its attempt is not counted (close()'s"
          + " promise); actual: counted, the run recorded as '" + runs.get(0).outcome().orElse("") + "', decision '"
          + runs.get(0).decision().orElse("") + "'");
      assertTrue(runs.get(0).decision().orElse("").startsWith("not counted as an attempt"),
          "recorded as handed back by close(), not as a process death: " + runs.get(0).decision().orElse(""));
    }
  }
}
