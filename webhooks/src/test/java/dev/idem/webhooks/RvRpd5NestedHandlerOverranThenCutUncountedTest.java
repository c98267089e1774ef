package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Review (rpd5) of dcfff89b..3d69b667: a handler run by a {@code processDue} called from a worker's
 * handler is "on that worker's run, whose maximum run time interrupts whatever the thread runs then,
 * the nested handler's failure counted as its attempt" (docs/webhooks.md), and close() promises that a
 * run "the maximum run time had already interrupted counts as a failed attempt (as that limit says)
 * though close() interrupts it again" (close() Javadoc, docs). But {@code WorkerRuns.cutShort} judges
 * each stacked run by its own {@code overran()}, and the nested processDue run carries no limit
 * ({@code timedBy} is only called for the worker's run), so the nested run is marked cut
 * ({@code r.cut = !r.overran()} is true) although the worker's maximum run time had already
 * interrupted its handler. Its failure then goes through {@code cutByClose}: the event is handed back
 * PENDING with its attempt NOT counted, instead of the failed attempt the limit makes it.
 *
 * <p>Expected: the nested event's attempt is counted (attempts 1). Actual: 0, "interrupted by the
 * processor's close". Virtual clock and scheduler for the watchdog; latches, no sleeps.
 */
class RvRpd5NestedHandlerOverranThenCutUncountedTest extends InboxOnVirtualClock {

  @Test
  void aNestedHandlerTheWorkersMaximumRunTimeInterruptedCountsItsAttemptThoughCloseCutsIt() throws Exception {
    CountDownLatch outerRunning = new CountDownLatch(1);
    CountDownLatch goInner = new CountDownLatch(1);
    CountDownLatch innerRunning = new CountDownLatch(1);
    CountDownLatch overranSeen = new CountDownLatch(1);
    CountDownLatch outerDone = new CountDownLatch(1);
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor[] p = new WebhookProcessor[1];
    p[0] = WebhookProcessor.builder(inbox)
        .handler("outer", e -> {
          try {
            outerRunning.countDown();
            goInner.await();
            p[0].processDue(1);
          } finally {
            outerDone.countDown();
          }
        })
        .handler("inner", e -> {
          innerRunning.countDown();
          try {
            new CountDownLatch(1).await(); // until the worker's maximum run time interrupts it
          } catch (InterruptedException overran) {
            overranSeen.countDown(); // swallowed once: it goes on
          }
          new CountDownLatch(1).await(); // until close() interrupts it again: throws
        })
        .workers(1).maxRunTime(Duration.ofMinutes(1)).closeGrace(Duration.ZERO)
        .clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_outer", "outer");
    p[0].start();
    time.runDueTasks();
    assertTrue(outerRunning.await(30, TimeUnit.SECONDS), "the outer handler runs on the worker");
    deliver(receiver, time, "evt_inner", "inner");
    goInner.countDown();
    assertTrue(innerRunning.await(30, TimeUnit.SECONDS), "the nested processDue runs the inner handler");
    time.advance(Duration.ofSeconds(90)); // the worker's maximum run time passes: the watchdog interrupts
    assertTrue(overranSeen.await(30, TimeUnit.SECONDS), "the watchdog interrupted the nested handler");

    Thread closing = new Thread(p[0]::close, "close");
    closing.start(); // grace zero: cuts the runs short at once
    assertTrue(outerDone.await(30, TimeUnit.SECONDS), "the handlers ended");
    closing.join(30_000);
    assertFalse(closing.isAlive(), "close() returned");

    InboxEntry inner = inbox.find("acme", "evt_inner").orElseThrow();
    assertEquals(1, inner.attempts(), "the nested handler's run was interrupted by the worker's maximum run time"
        + " before close() cut it (documented: a failed attempt, counted), but it was handed back uncounted as"
        + " cut short by close(): " + inner);
  }
}
