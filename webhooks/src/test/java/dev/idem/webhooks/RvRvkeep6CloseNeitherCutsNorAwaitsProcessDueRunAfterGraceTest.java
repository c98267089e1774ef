package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Review (rvkeep6) of d6ed53f0: docs/webhooks.md's close() paragraph, as edited by this commit,
 * says close() "waits closeGrace (10 s) for running handlers (those a processDue call runs on the
 * app's threads too), renewing their leases meanwhile ..., then interrupts them and waits up to
 * 5 s more for those runs to end and record their outcome (so that the inbox, closed next, is still
 * open for it)". For a processor driven by processDue (never started), close() does neither once
 * the grace is out: {@code awaitWorkers}' {@code w == null} branch logs a warning and returns, so
 * the handler is not interrupted and close() returns at once, with the run still going; the app's
 * next step, closing the inbox, then closes it under that run (its outcome lost, the event run
 * again). Either the code or the sentence is wrong; as written, a user relying on it loses the
 * outcome.
 *
 * <p>Here: grace 50 ms (a bound that must run out; nothing waits on real time for a race). The
 * handler waits, interruptibly, for the test. close() from the app's shutdown thread returns; by
 * then the handler must have been interrupted and its outcome recorded.
 */
class RvRvkeep6CloseNeitherCutsNorAwaitsProcessDueRunAfterGraceTest extends InboxOnVirtualClock {

  @Test
  void closeInterruptsAProcessDueHandlerPastTheGraceAndWaitsForItsOutcome() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("report.build", e -> {
          entered.countDown();
          try {
            finish.await();
          } catch (InterruptedException ex) {
            interrupted.set(true);
            throw ex;
          }
        })
        .closeGrace(Duration.ofMillis(50)).clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_1", "report.build");
    time.advance(Duration.ofMillis(1));

    CompletableFuture<Integer> driving = CompletableFuture.supplyAsync(() -> p.processDue(1));
    try {
      assertTrue(entered.await(30, TimeUnit.SECONDS), "the handler started");
      p.close(); // the app's shutdown: the grace runs out
      boolean wasInterrupted = interrupted.get();
      // Its outcome written: a run close() cut short goes back to PENDING uncounted (no listener
      // hears that), so the inbox is read rather than a listener.
      boolean wasRecorded = inbox.find("acme", "evt_1").orElseThrow().state() != InboxState.PROCESSING;
      assertTrue(wasInterrupted && wasRecorded, "after the grace close() must interrupt the handler a processDue call"
          + " runs and wait for its outcome to be recorded before returning (docs/webhooks.md, close()); it returned"
          + " with the handler " + (wasInterrupted ? "interrupted" : "never interrupted") + " and its outcome "
          + (wasRecorded ? "recorded" : "not recorded"));
    } finally {
      finish.countDown();
      driving.get(30, TimeUnit.SECONDS);
    }
  }
}
