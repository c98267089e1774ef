package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Review (rvkeep5), docs/webhooks.md's close() paragraph (edited in this round to take in
 * processDue): "close() stops claiming (...; a processDue call claims nothing more ...), waits
 * closeGrace (10 s) for running handlers, renewing their leases meanwhile (a handler that finishes
 * within the grace is never run again beside itself elsewhere)". For a handler running in a
 * processDue call (the app's own thread: the documented app-driven path, "it may run beside
 * start()ed processing"), close() from another thread (the app's shutdown) neither waits nor keeps
 * renewing: it does not know the run exists (only the pool's runs and the polls are waited for),
 * and its {@code heartbeat.close()} ends the renewal of that run's lease at once. The lease lapses
 * while the handler still runs, another processor claims the event and runs its handler beside
 * this one: the event processed twice, concurrently. Not new in this round (processDue's runs were
 * never waited for), but the paragraph promises it for "running handlers" with no exception.
 *
 * <p>Here: lease 30 s, grace 1 h (nothing depends on real time). p1.processDue(1) runs a handler
 * that waits for the test; close() is called on another thread; 35 s pass on the virtual clock
 * (the heartbeat's beats run on its scheduler on the way, if it still beats); p2.processDue(1)
 * should find the event still leased and run nothing.
 */
class RvRvkeep5CloseDropsProcessDueRunsLeaseTest extends InboxOnVirtualClock {
  private static final Duration LEASE = Duration.ofSeconds(30);

  @Test
  void aHandlerRunningInProcessDueKeepsItsLeaseThroughAnotherThreadsClose() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    AtomicInteger firstRuns = new AtomicInteger();
    AtomicInteger secondRuns = new AtomicInteger();
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p1 = WebhookProcessor.builder(inbox)
        .handler("report.build", e -> {
          firstRuns.incrementAndGet();
          entered.countDown();
          finish.await(); // a slow but well-behaved handler: it finishes within the grace
        })
        .lease(LEASE).closeGrace(Duration.ofHours(1)).clock(time.clock()).scheduler(time.scheduler())
        .owner("p1").build();
    WebhookProcessor p2 = WebhookProcessor.builder(inbox).handler("report.build", e -> secondRuns.incrementAndGet())
        .lease(LEASE).clock(time.clock()).scheduler(time.scheduler()).owner("p2").build();
    deliver(receiver, time, "evt_1", "report.build");
    time.advance(Duration.ofMillis(1));

    CompletableFuture<Integer> driving = CompletableFuture.supplyAsync(() -> p1.processDue(1));
    Thread closer = new Thread(p1::close, "closer");
    try {
      assertTrue(entered.await(30, TimeUnit.SECONDS), "the handler started");
      closer.start(); // the app's shutdown
      ThreadFrames.awaitEndedOrWaiting(closer); // close() returned, or waits (for the grace)

      for (int i = 0; i < 7; i++) {
        time.advance(Duration.ofSeconds(5));
      }
      int ran = p2.processDue(1);
      assertEquals(0, ran, "p1's handler is still running in processDue, inside the close grace, so its lease must"
          + " still be held; instead close() (" + (closer.isAlive() ? "still waiting" : "returned at once")
          + ") stopped renewing it, and p2 claimed the event and ran its handler a second time, concurrently"
          + " (first runs: " + firstRuns.get() + ", second runs: " + secondRuns.get() + ")");
    } finally {
      finish.countDown();
      driving.get(30, TimeUnit.SECONDS);
      closer.join(TimeUnit.SECONDS.toMillis(30));
      p2.close();
    }
  }
}
