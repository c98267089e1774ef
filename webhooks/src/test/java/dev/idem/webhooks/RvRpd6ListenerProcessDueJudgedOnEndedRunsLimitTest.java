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
 * Review (rpd6) of bbdc701a: {@code WorkerRuns.Run.overran()} now reads the limits of every run the
 * run is nested in, also of an outer worker's run whose handler has already ENDED. A listener may
 * call {@code processDue} (WorkerRuns' Javadoc: "a handler, or a listener, that calls processDue");
 * on a worker, the listener is told of the outer event's outcome after its handler ended, while the
 * worker's run is still stacked. If that outer handler had outlived its maximum run time (interrupted,
 * then returned normally: DONE, {@code Processed} told), its limit stays {@code exceeded()} for good,
 * and every handler the listener's processDue then runs is judged "overran" by {@code cutShort}
 * ({@code r.cut = !r.overran()} is false), though no maximum run time ever interrupted it (the
 * nested run has none, and the outer one's ended with its handler). close() cuts it past the grace,
 * and its failure, close()'s interrupt, is counted as a failed attempt by the classifier path
 * (retry scheduled; a dead letter on the last attempt) instead of going back PENDING uncounted as
 * close() promises for a run it cut short. Before bbdc701a it was handed back uncounted.
 *
 * <p>Expected: the listener's event is PENDING with 0 attempts. Actual: its attempt counted (1).
 * Same cause, second case: an inner handler that returns normally though close() interrupted it
 * succeeded, and close()'s interrupt should be taken back ({@code handlerEnded} does so only for a
 * run marked cut); here it is not, and exit() gives nothing back either (the outer handler ended), so
 * the listener's processDue returns to the app's listener code with close()'s interrupt set, which
 * the processDue Javadoc says it never does ("the call does not return it to the app").
 * Virtual clock and scheduler; latches, no sleeps.
 */
class RvRpd6ListenerProcessDueJudgedOnEndedRunsLimitTest extends InboxOnVirtualClock {

  @Test
  void aHandlerRunByAListenersProcessDueAfterAnOverranHandlerEndedIsCutShortUncounted() throws Exception {
    CountDownLatch outerRunning = new CountDownLatch(1);
    CountDownLatch overranSeen = new CountDownLatch(1);
    CountDownLatch outerMayReturn = new CountDownLatch(1);
    CountDownLatch innerRunning = new CountDownLatch(1);
    CountDownLatch listenerDone = new CountDownLatch(1);
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor[] p = new WebhookProcessor[1];
    p[0] = WebhookProcessor.builder(inbox)
        .handler("outer", e -> {
          outerRunning.countDown();
          try {
            new CountDownLatch(1).await(); // until its maximum run time interrupts it
          } catch (InterruptedException overran) {
            overranSeen.countDown();
          }
          outerMayReturn.await(); // returns normally: DONE, Processed told on the worker
        })
        .handler("inner", e -> {
          innerRunning.countDown();
          new CountDownLatch(1).await(); // until close() interrupts it: throws
        })
        .listener(activity -> {
          if (activity instanceof WebhookActivity.Processed done && done.eventType().equals("outer")) {
            try {
              p[0].processDue(1); // the documented nesting: a listener that calls processDue
            } finally {
              listenerDone.countDown();
            }
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
    outerMayReturn.countDown();
    assertTrue(innerRunning.await(30, TimeUnit.SECONDS), "the listener's processDue runs the inner handler");

    Thread closing = new Thread(p[0]::close, "close");
    closing.start(); // grace zero: cuts the inner run short at once
    assertTrue(listenerDone.await(30, TimeUnit.SECONDS), "the listener's processDue returned");
    closing.join(30_000);
    assertFalse(closing.isAlive(), "close() returned");

    InboxEntry outer = inbox.find("acme", "evt_outer").orElseThrow();
    assertEquals(InboxState.DONE, outer.state(), "the outer handler returned normally: " + outer);
    InboxEntry inner = inbox.find("acme", "evt_inner").orElseThrow();
    assertEquals(0, inner.attempts(), "the inner handler was interrupted only by close() past its grace (no"
        + " maximum run time ever interrupted it: the outer handler's limit had ended with that handler), so it"
        + " goes back uncounted; but it was judged overran on the ended outer run's limit and counted: " + inner);
    assertEquals(InboxState.PENDING, inner.state(), "handed back, due again: " + inner);
  }

  @Test
  void aListenersProcessDueReturnsWithoutCloseInterruptAfterItsHandlerReturnedNormally() throws Exception {
    CountDownLatch outerRunning = new CountDownLatch(1);
    CountDownLatch overranSeen = new CountDownLatch(1);
    CountDownLatch outerMayReturn = new CountDownLatch(1);
    CountDownLatch innerRunning = new CountDownLatch(1);
    CountDownLatch listenerDone = new CountDownLatch(1);
    boolean[] interruptedAfter = new boolean[1];
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor[] p = new WebhookProcessor[1];
    p[0] = WebhookProcessor.builder(inbox)
        .handler("outer", e -> {
          outerRunning.countDown();
          try {
            new CountDownLatch(1).await();
          } catch (InterruptedException overran) {
            overranSeen.countDown();
          }
          outerMayReturn.await();
        })
        .handler("inner", e -> {
          innerRunning.countDown();
          try {
            new CountDownLatch(1).await(); // until close() interrupts it
          } catch (InterruptedException cut) {
            Thread.currentThread().interrupt(); // restores the flag, and returns normally: DONE
          }
        })
        .listener(activity -> {
          if (activity instanceof WebhookActivity.Processed done && done.eventType().equals("outer")) {
            try {
              p[0].processDue(1);
              interruptedAfter[0] = Thread.interrupted();
            } finally {
              listenerDone.countDown();
            }
          }
        })
        .workers(1).maxRunTime(Duration.ofMinutes(1)).closeGrace(Duration.ZERO)
        .clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_outer", "outer");
    p[0].start();
    time.runDueTasks();
    assertTrue(outerRunning.await(30, TimeUnit.SECONDS), "the outer handler runs on the worker");
    time.advance(Duration.ofSeconds(90));
    assertTrue(overranSeen.await(30, TimeUnit.SECONDS), "the watchdog interrupted the outer handler");
    deliver(receiver, time, "evt_inner", "inner");
    outerMayReturn.countDown();
    assertTrue(innerRunning.await(30, TimeUnit.SECONDS), "the listener's processDue runs the inner handler");

    Thread closing = new Thread(p[0]::close, "close");
    closing.start();
    assertTrue(listenerDone.await(30, TimeUnit.SECONDS), "the listener's processDue returned");
    closing.join(30_000);
    assertFalse(closing.isAlive(), "close() returned");

    InboxEntry inner = inbox.find("acme", "evt_inner").orElseThrow();
    assertEquals(InboxState.DONE, inner.state(), "the inner handler returned normally: " + inner);
    assertFalse(interruptedAfter[0], "processDue returned to the listener with close()'s interrupt still set:"
        + " its handler returned normally, so the interrupt should have been taken back, but the run was judged"
        + " overran on the ended outer run's limit");
  }
}
