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
 * Review (rpd2) of fa53ef88: {@code WorkerRuns.handlerEnded} takes back close()'s interrupt after a
 * nested processDue handler returned normally unless an outer run of the thread "still needs it",
 * and {@code outerCutRunning} (now outerHandlerRunning) counted only outer runs that close() marked cut. An outer worker run
 * whose maximum run time had already passed (the watchdog interrupted it, its handler swallowed that
 * interrupt, as cutShort's Javadoc expects) is interrupted again by cutShort but not marked cut
 * (it overran). So when its handler runs processDue and the nested handler returns normally after
 * close()'s cut (keeping the interrupt status, as a well-behaved blocking call leaves it), the one
 * interrupt close() made for both runs is taken back, and the outer
 * handler, which close() promises to interrupt again ("a handler may have swallowed the first
 * interrupt"), never sees it: it runs on past close()'s 5 s hand-back wait and is left behind.
 *
 * <p>Expected: the outer handler is interrupted when processDue returns to it. Actual: not.
 * Virtual clock and scheduler for the watchdog; latches, no sleeps.
 */
class RvRpd2OverranOuterRunLosesCloseInterruptTest extends InboxOnVirtualClock {

  @Test
  void closesInterruptOfAnOverranOuterRunIsNotTakenBackByANestedHandlersNormalReturn() throws Exception {
    CountDownLatch outerRunning = new CountDownLatch(1);
    CountDownLatch overranSeen = new CountDownLatch(1);
    CountDownLatch goInner = new CountDownLatch(1);
    CountDownLatch innerRunning = new CountDownLatch(1);
    CompletableFuture<Boolean> outerInterruptedAfterProcessDue = new CompletableFuture<>();
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor[] p = new WebhookProcessor[1];
    p[0] = WebhookProcessor.builder(inbox)
        .handler("outer", e -> {
          outerRunning.countDown();
          try {
            new CountDownLatch(1).await(); // until the watchdog interrupts it
          } catch (InterruptedException overran) {
            overranSeen.countDown(); // swallowed: it goes on with more work
          }
          awaitUninterruptibly(goInner);
          p[0].processDue(1);
          outerInterruptedAfterProcessDue.complete(Thread.currentThread().isInterrupted());
        })
        .handler("inner", e -> {
          innerRunning.countDown();
          try {
            new CountDownLatch(1).await(); // until close() cuts it short
          } catch (InterruptedException cut) {
            Thread.currentThread().interrupt(); // finishes its work anyway, the status kept, and returns
          }
        })
        .workers(1).maxRunTime(Duration.ofMinutes(1)).closeGrace(Duration.ZERO)
        .clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_outer", "outer");
    p[0].start();
    time.runDueTasks();
    assertTrue(outerRunning.await(30, TimeUnit.SECONDS), "the outer handler runs on the worker");
    time.advance(Duration.ofSeconds(90)); // its maximum run time passes: the watchdog interrupts it
    assertTrue(overranSeen.await(30, TimeUnit.SECONDS), "the watchdog interrupted the outer handler");
    deliver(receiver, time, "evt_inner", "inner");
    goInner.countDown();
    assertTrue(innerRunning.await(30, TimeUnit.SECONDS), "the nested processDue runs the inner handler");

    Thread closing = new Thread(p[0]::close, "close");
    closing.start(); // grace zero: cuts the runs short at once

    boolean outerInterrupted = outerInterruptedAfterProcessDue.get(30, TimeUnit.SECONDS);
    closing.join(30_000);
    assertFalse(closing.isAlive(), "close() returned");
    assertEquals(InboxState.DONE, inbox.find("acme", "evt_inner").orElseThrow().state(),
        "the inner handler returned normally: its outcome is its own");
    assertTrue(outerInterrupted, "close() interrupts again a handler whose maximum run time had passed (it may"
        + " have swallowed the watchdog's interrupt), but the nested handler's normal return took back the"
        + " interrupt the outer run still needed");
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        latch.await();
        break;
      } catch (InterruptedException ex) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
