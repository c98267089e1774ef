package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.webhooks.support.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (e6dcde74): close() now stops the LeaseHeartbeat before the grace instead of after it.
 * A handler that is simply slow, and finishes within the closeGrace the app configured (a rolling
 * deploy with a 60 s grace and a 30 s lease, say), loses its lease during the grace: another
 * processor or instance claims the event and runs the handler a second time, concurrently with
 * the first, and the first run's outcome is then discarded as stale. Before the commit the lease
 * was renewed throughout the grace; only a handler still running after it (one that ignored the
 * interrupt) needed its renewals stopped.
 *
 * <p>Fake clock and scheduler (renewals run on the test thread); the worker and the closing thread
 * are real threads, waited for on latches and thread states, never a sleep. The grace is long
 * (1 h) so that nothing depends on real time: the handler finishes when the test lets it.
 */
class ReviewLeaseLapsesDuringGraceTest {
  private static final Duration LEASE = Duration.ofSeconds(30);

  @TempDir
  Path dir;

  @Test
  void aHandlerFinishingWithinTheGraceIsRunAgainConcurrentlyElsewhere() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    AtomicInteger secondRuns = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p1 = WebhookProcessor.builder(inbox)
          .handler("report.build", e -> {
            entered.countDown();
            finish.await(); // a slow but well-behaved handler: it finishes within the grace
          })
          .lease(LEASE).closeGrace(Duration.ofHours(1)).clock(time.clock()).scheduler(time.scheduler())
          .owner("p1").build();
      WebhookProcessor p2 = WebhookProcessor.builder(inbox).handler("report.build", e -> secondRuns.incrementAndGet())
          .lease(LEASE).clock(time.clock()).owner("p2").build();
      Thread closer = new Thread(p1::close, "closer");
      try {
        p1.start();
        deliver(receiver, time, "evt_1", "report.build");
        time.runDueTasks();
        assertTrue(entered.await(30, TimeUnit.SECONDS), "the handler started");

        closer.start(); // waits up to the grace for the handler
        Await.until("close() waiting out its grace", Duration.ofSeconds(30),
            () -> closer.getState() == Thread.State.TIMED_WAITING);

        // 35 s of the grace pass, renewals (if any) running on the way: still well within the grace.
        for (int i = 0; i < 7; i++) {
          time.advance(Duration.ofSeconds(5));
        }
        int ran = p2.processDue(1);
        assertEquals(0, ran, "p1's handler is still running inside the close grace the app gave it, so its lease"
            + " must still be held; instead p2 claimed the event and ran the handler a second time, concurrently"
            + " (second runs: " + secondRuns.get() + "), because close() stopped renewing the lease before the"
            + " grace");
      } finally {
        finish.countDown();
        closer.join(TimeUnit.SECONDS.toMillis(30));
        p2.close();
      }
      List<HandlerAttempt> attempts = inbox.attempts("acme", "evt_1");
      assertEquals("done", attempts.get(0).outcome().orElse("?"),
          "p1's run finished within the grace; its outcome must be recorded, not discarded: " + attempts);
    }
  }
}
