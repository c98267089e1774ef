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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Review (rpd3) of dcfff89b/c96d729e/8dcba21c: close()'s cut ({@code WorkerRuns.cutShort}) marks
 * both runs of a thread cut short, the outer worker run whose handler called processDue and the
 * nested run whose handler is running, but interrupts the thread once, for both. If the nested
 * handler consumes that one interrupt (it catches the InterruptedException and returns normally,
 * which the docs call a success; or throws a failure of its own that wraps it, recorded as cut
 * short), processDue returns to the outer handler with no interrupt: the outer run, which close()
 * counts as interrupted and judges cut short, is never told. A handler blocked after that (I/O, a
 * wait) is not interrupted as close() promises: close() leaves it behind after its 5 s hand-back
 * wait, stops renewing its lease, and another processor runs the outer event beside it (processed
 * twice). 8dcba21c keeps the interrupt for an outer run when the nested handler left it set; when
 * the nested handler consumed it, nothing gives it back.
 *
 * <p>Expected: the outer handler sees the interrupt when the nested processDue returns to it.
 * Actual: not. Grace zero, latches, no sleeps.
 */
class RvRpd3NestedHandlerConsumesOuterRunsCloseInterruptTest extends InboxOnVirtualClock {

  @Test
  void nestedHandlerReturningNormallyAfterTheCutLeavesTheOuterRunUninterrupted() throws Exception {
    assertOuterInterrupted(false);
  }

  @Test
  void nestedHandlerThrowingAWrappedInterruptLeavesTheOuterRunUninterrupted() throws Exception {
    assertOuterInterrupted(true);
  }

  /**
   * The consequence: the outer handler, which goes on to wait (for something an interrupt would
   * end), is left behind by close() (after its 5 s hand-back wait, real time: close()'s own bound),
   * its lease no longer renewed, and a second processor runs the outer event beside it.
   */
  @Test
  void theOuterHandlerIsLeftBehindAndItsEventRunsTwice() throws Exception {
    CountDownLatch outerRunning = new CountDownLatch(1);
    CountDownLatch goInner = new CountDownLatch(1);
    CountDownLatch innerRunning = new CountDownLatch(1);
    CountDownLatch outerLetGo = new CountDownLatch(1);
    AtomicInteger outerRuns = new AtomicInteger();
    AtomicBoolean firstOuterRunGoesOn = new AtomicBoolean();
    AtomicBoolean ranBesideIt = new AtomicBoolean();
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor[] p = new WebhookProcessor[1];
    p[0] = WebhookProcessor.builder(inbox)
        .handler("outer", e -> {
          outerRuns.incrementAndGet();
          firstOuterRunGoesOn.set(true);
          try {
            outerRunning.countDown();
            goInner.await();
            p[0].processDue(1);
            outerLetGo.await(); // an interrupt ends this wait; without one, the test lets it go at the end
          } finally {
            firstOuterRunGoesOn.set(false);
          }
        })
        .handler("inner", e -> {
          innerRunning.countDown();
          try {
            new CountDownLatch(1).await(); // until close() cuts it short
          } catch (InterruptedException cut) {
            // stops early and returns normally: a success, as the docs say
          }
        })
        .workers(1).closeGrace(Duration.ZERO).lease(Duration.ofMinutes(1))
        .clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_outer", "outer");
    p[0].start();
    time.runDueTasks();
    assertTrue(outerRunning.await(30, TimeUnit.SECONDS), "the outer handler runs on the worker");
    deliver(receiver, time, "evt_inner", "inner");
    goInner.countDown();
    assertTrue(innerRunning.await(30, TimeUnit.SECONDS), "the nested processDue runs the inner handler");
    try {
      p[0].close(); // grace zero: cuts both runs short; the outer is never interrupted, left behind
      time.advance(Duration.ofMinutes(2)); // past the outer event's lease, no longer renewed
      WebhookProcessor p2 = WebhookProcessor.builder(inbox)
          .handler("outer", e -> {
            outerRuns.incrementAndGet();
            ranBesideIt.set(firstOuterRunGoesOn.get());
          })
          .handler("inner", e -> { })
          .clock(time.clock()).scheduler(time.scheduler()).owner("p2").build();
      try {
        p2.processDue(5);
      } finally {
        p2.close();
      }
      assertEquals(2, outerRuns.get(), "the outer event runs again on the second processor, once handed back");
      assertFalse(ranBesideIt.get(), "close() cut the outer run short but never interrupted its handler: left"
          + " behind, its lease lapsed, and a second processor ran the event beside it");
    } finally {
      outerLetGo.countDown();
    }
  }

  private void assertOuterInterrupted(boolean innerThrows) throws Exception {
    CountDownLatch outerRunning = new CountDownLatch(1);
    CountDownLatch goInner = new CountDownLatch(1);
    CountDownLatch innerRunning = new CountDownLatch(1);
    CompletableFuture<Boolean> outerInterruptedAfterProcessDue = new CompletableFuture<>();
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor[] p = new WebhookProcessor[1];
    p[0] = WebhookProcessor.builder(inbox)
        .handler("outer", e -> {
          outerRunning.countDown();
          goInner.await();
          p[0].processDue(1);
          outerInterruptedAfterProcessDue.complete(Thread.currentThread().isInterrupted());
        })
        .handler("inner", e -> {
          innerRunning.countDown();
          try {
            new CountDownLatch(1).await(); // until close() cuts it short
          } catch (InterruptedException cut) {
            if (innerThrows) {
              throw new IllegalStateException("stopped: interrupted", cut);
            }
            // stops early and returns normally: a success, as the docs say
          }
        })
        .workers(1).closeGrace(Duration.ZERO)
        .clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_outer", "outer");
    p[0].start();
    time.runDueTasks();
    assertTrue(outerRunning.await(30, TimeUnit.SECONDS), "the outer handler runs on the worker");
    deliver(receiver, time, "evt_inner", "inner");
    goInner.countDown();
    assertTrue(innerRunning.await(30, TimeUnit.SECONDS), "the nested processDue runs the inner handler");

    Thread closing = new Thread(p[0]::close, "close");
    closing.start(); // grace zero: cuts both runs short at once, one interrupt for the thread

    boolean outerInterrupted = outerInterruptedAfterProcessDue.get(30, TimeUnit.SECONDS);
    closing.join(30_000);
    assertFalse(closing.isAlive(), "close() returned");
    assertTrue(outerInterrupted, "close() cut the outer run short (it judges it so) but the outer handler never"
        + " sees an interrupt: the nested handler consumed the only one close() made for the thread"
        + (innerThrows ? " (it threw a wrapped failure)" : " (it returned normally)"));
  }
}
