package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
 * Review: {@link WebhookProcessor#close()} is "idempotent", but a second call returns at once while
 * the first is still waiting out its grace for running handlers. Whoever made the second call then
 * closes the inbox under those handlers. That is the Spring starter's shutdown whenever the
 * lifecycle's stop outlasts Boot's {@code timeout-per-shutdown-phase} (30 s; the starter's stop
 * runs the outbox drain, 15 s by default, then this close's 10 s grace, then the executor's close,
 * up to 10 s): Boot goes on to destroy the beans, the processor bean's close() returns at once, and
 * the inbox bean closes. It is also an app whose shutdown hook and main both close. A handler that
 * then finishes within the grace, successfully, cannot record DONE: the event stays PROCESSING,
 * is counted at the next open as a run the process died during, and its handler runs again.
 *
 * <p>Fake clock and scheduler; the grace is an hour so nothing depends on real time. Both closes
 * run on threads of their own and are seen waiting by their thread state; no sleep.
 */
class ReviewSecondCloseReturnsEarlyTest {
  @TempDir
  Path dir;

  @Test
  void aSecondCloseWaitsForTheFirstOne() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    AtomicInteger runs = new AtomicInteger();
    AtomicReference<Thread> worker = new AtomicReference<>();
    WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("order.paid", e -> {
          runs.incrementAndGet();
          worker.set(Thread.currentThread());
          running.countDown();
          finish.await(); // a slow call that finishes within the grace
        })
        .workers(1).clock(time.clock()).scheduler(time.scheduler()).owner("p1").closeGrace(Duration.ofHours(1))
        .build();
    deliver(receiver, time, "evt_1");
    p.start();
    time.runDueTasks();
    assertTrue(running.await(30, TimeUnit.SECONDS), "the handler runs");

    Thread firstClose = new Thread(p::close, "first-close"); // the lifecycle's stop
    firstClose.start();
    while (firstClose.getState() != Thread.State.TIMED_WAITING) {
      assertTrue(firstClose.isAlive(), "the first close() waits out its grace for the running handler");
      Thread.onSpinWait();
    }
    // The bean's destroy method, after Boot stopped waiting for the phase: it must wait for the
    // first close (seen waiting by its thread state) instead of returning at once.
    Thread secondClose = new Thread(p::close, "second-close");
    secondClose.start();
    while (secondClose.getState() != Thread.State.TIMED_WAITING) {
      assertTrue(secondClose.isAlive(), "the second close() returned while the first still waits out its grace");
      Thread.onSpinWait();
    }
    finish.countDown(); // the handler finishes within the grace, successfully
    secondClose.join(30_000);
    inbox.close(); // the next bean destroyed, once the second close() returned
    worker.get().join(30_000);
    firstClose.join(30_000);

    try (WebhookInbox reopened = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      InboxEntry entry = reopened.find("acme", "evt_1").orElseThrow();
      assertEquals(InboxState.DONE, entry.state(), "the handler returned within close()'s grace: DONE; actual: "
          + entry.state() + ", last run recorded as '"
          + reopened.attempts("acme", "evt_1").get(0).decision().orElse("") + "', to be run again");
    }
    assertEquals(1, runs.get());
  }
}
