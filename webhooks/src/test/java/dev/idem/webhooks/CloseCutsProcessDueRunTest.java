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
 * A handler that a processDue call runs on the app's thread is cut short by a close() from another
 * thread after the grace as a worker's is: interrupted, its event handed back to PENDING before
 * close() returns, its attempt not counted (the run was shorter than the lease), and run once by
 * the next processor.
 */
class CloseCutsProcessDueRunTest extends InboxOnVirtualClock {

  @Test
  void aProcessDueRunCutByCloseGoesBackUncountedAndRunsOnceLater() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    AtomicInteger firstRuns = new AtomicInteger();
    AtomicInteger secondRuns = new AtomicInteger();
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p1 = WebhookProcessor.builder(inbox)
        .handler("report.build", e -> {
          firstRuns.incrementAndGet();
          entered.countDown();
          new CountDownLatch(1).await(); // until interrupted
        })
        // a short grace that must run out: a bound, nothing waits on real time for a race
        .closeGrace(Duration.ofMillis(50)).clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    WebhookProcessor p2 = WebhookProcessor.builder(inbox).handler("report.build", e -> secondRuns.incrementAndGet())
        .clock(time.clock()).scheduler(time.scheduler()).owner("p2").build();
    deliver(receiver, time, "evt_1", "report.build");
    time.advance(Duration.ofMillis(1));

    CompletableFuture<Integer> driving = CompletableFuture.supplyAsync(() -> p1.processDue(5));
    assertTrue(entered.await(30, TimeUnit.SECONDS), "the handler started");
    p1.close(); // the app's shutdown, on another thread

    InboxEntry after = inbox.find("acme", "evt_1").orElseThrow();
    assertEquals(InboxState.PENDING, after.state(), "handed back before close() returned");
    assertEquals(0, after.attempts(), "the attempt close() cut short is not counted");
    assertEquals(1, driving.get(30, TimeUnit.SECONDS), "the call ran its one event, and claimed nothing after close()");

    assertEquals(1, p2.processDue(1), "the next processor runs it");
    p2.close();
    InboxEntry done = inbox.find("acme", "evt_1").orElseThrow();
    assertEquals(InboxState.DONE, done.state());
    assertEquals(1, done.attempts(), "one counted attempt: the second processor's");
    assertEquals(1, firstRuns.get());
    assertEquals(1, secondRuns.get());
  }
}
