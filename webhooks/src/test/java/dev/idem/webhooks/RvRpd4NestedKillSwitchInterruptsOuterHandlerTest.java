package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Review (rpd4) of 495a51a4: {@code WorkerRuns.exit()} interrupts the thread again whenever the
 * processor's runs are cut ({@code cut}, a processor-wide flag) and an outer run of the thread has
 * its handler running. It does not ask whether that outer run was cut short (or overran): a cut
 * made by a close() called on this very thread, which {@code cutShort} skips ("a handler's own
 * close() does not cut its run short"), also sets {@code cut}.
 *
 * <p>So: a handler ("outer", run by the app's {@code processDue}, or on a worker) calls
 * {@code processDue}, whose handler ("inner") calls {@code close()} (the documented kill switch),
 * while another run (another app thread's {@code processDue}) outlives the grace. close() cuts
 * that other run short, never this thread's; the inner handler returns normally, and as the nested
 * processDue returns, exit() interrupts the outer handler, which nothing cut short. The docs say
 * the calling handler is not interrupted and is recorded by its own outcome; instead the outer
 * handler's next wait throws InterruptedException, recorded as the handler's own failure (a
 * counted attempt, retried; on the last attempt a dead letter), and processDue returns to the
 * app's thread with an interrupt nothing asked for (not taken back: the outer run was not cut).
 *
 * <p>Latches only; grace zero; no sleeps.
 */
class RvRpd4NestedKillSwitchInterruptsOuterHandlerTest extends InboxOnVirtualClock {

  @Test
  void aNestedKillSwitchInterruptsTheOuterHandlerAndTheAppThread() throws Exception {
    Result r = runScenario(false);
    assertFalse(r.outerInterrupted, "nothing cut the outer handler short (close() was called on its own thread),"
        + " yet it finds its thread interrupted when the nested processDue returns");
    assertFalse(r.app.interruptedAfter(), "processDue returns to the app's thread with an interrupt nothing asked"
        + " for");
  }

  @Test
  void theOuterEventIsRecordedAsAFailedAttemptInsteadOfDone() throws Exception {
    Result r = runScenario(true);
    InboxEntry outer = inbox.find("acme", "evt_outer").orElseThrow();
    assertEquals(InboxState.DONE, outer.state(), "the outer handler, which would have succeeded, failed on the"
        + " interrupt exit() gave it (state " + outer.state() + ", attempts " + outer.attempts() + ")");
  }

  private Result runScenario(boolean outerWaitsAfter) throws Exception {
    CountDownLatch slowRunning = new CountDownLatch(1);
    CountDownLatch alreadyOpen = new CountDownLatch(0);
    CompletableFuture<Boolean> outerInterrupted = new CompletableFuture<>();
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor[] p = new WebhookProcessor[1];
    p[0] = WebhookProcessor.builder(inbox)
        .handler("slow", e -> {
          slowRunning.countDown();
          new CountDownLatch(1).await(); // until close() cuts it short
        })
        .handler("outer", e -> {
          p[0].processDue(1);
          outerInterrupted.complete(Thread.currentThread().isInterrupted());
          if (outerWaitsAfter) {
            alreadyOpen.await(); // returns at once unless the thread is interrupted
          }
        })
        .handler("inner", e -> p[0].close()) // the kill switch
        .closeGrace(Duration.ZERO)
        .clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_slow", "slow");
    time.advance(Duration.ofMillis(1));
    ProcessDueThread other = new ProcessDueThread(() -> p[0].processDue(1)).start();
    assertTrue(slowRunning.await(30, TimeUnit.SECONDS), "another app thread's processDue runs a slow handler");
    deliver(receiver, time, "evt_outer", "outer");
    time.advance(Duration.ofMillis(1));
    deliver(receiver, time, "evt_inner", "inner");
    time.advance(Duration.ofMillis(1));

    ProcessDueThread app = new ProcessDueThread(() -> p[0].processDue(1)).start();
    assertEquals(1, app.ran(), "the app's processDue ran the outer event");
    assertEquals(1, other.ran(), "the slow run, cut short by the kill switch's close()");
    Result r = new Result();
    r.app = app;
    r.outerInterrupted = outerInterrupted.get(30, TimeUnit.SECONDS);
    assertEquals(InboxState.DONE, inbox.find("acme", "evt_inner").orElseThrow().state(), "the kill switch's event");
    assertEquals(InboxState.PENDING, inbox.find("acme", "evt_slow").orElseThrow().state(), "the cut run, handed back");
    return r;
  }

  private static final class Result {
    ProcessDueThread app;
    boolean outerInterrupted;
  }
}
