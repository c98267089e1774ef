package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.Scheduler;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Review (rvkeep3) of the kept-lease renewal (240b9cbc .. a8323589): a handler's close() now begins
 * with {@code runs.stopTimingCaller()} -> {@code LeaseHeartbeat.keep(e)}, which, for a run whose
 * maximum run time had passed, calls {@code scheduler.schedule(..., ZERO)} on the handler's thread,
 * BEFORE close() sets {@code closed}. keep() catches only {@code RuntimeException} (its comment says
 * "Refused ... or worse: the kill switch goes on all the same"), so an Error from the scheduler (an
 * app-given Scheduler over a pool that must start a thread for it: {@code OutOfMemoryError: unable to
 * create native thread}, the very failure 40bcd9b6 handles for the workers) escapes close() before
 * anything is closed. Before this change keep() only set flags and could not throw.
 *
 * <p>Why it matters: the kill switch fails open. close() throws out of the handler, {@code closed} is
 * never set, the poll loop and the workers go on, and the next event delivered is claimed and run:
 * the handler that wanted processing stopped (a bad deploy, a poisoned downstream) gets the opposite.
 *
 * <p>Here: lease 3 min, maximum run time 20 s, an app scheduler over the virtual one that throws that
 * Error for a zero-delay task asked for on the kill switch's thread during its close() only. Fake
 * clock and scheduler, latches only, no sleep.
 */
class RvRvkeep3KillSwitchThrowsSchedulerErrorTest extends InboxOnVirtualClock {
  @Test
  void aKillSwitchAfterItsLimitStopsProcessingEvenIfTheSchedulerThrowsAnError() throws Exception {
    Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<Thread> stopWorker = new AtomicReference<>();
    AtomicBoolean armed = new AtomicBoolean();
    AtomicReference<Throwable> closeFailure = new AtomicReference<>();
    CountDownLatch stopRunning = new CountDownLatch(1);
    CountDownLatch limitPassed = new CountDownLatch(1);
    Semaphore goClose = new Semaphore(0);
    CountDownLatch closeReturned = new CountDownLatch(1);
    Scheduler virtual = time.scheduler();
    Scheduler app = (task, delay) -> {
      if (armed.get() && delay.isZero() && Thread.currentThread() == stopWorker.get()) {
        throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource"
            + " limits reached");
      }
      return virtual.schedule(task, delay);
    };
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p1 = WebhookProcessor.builder(inbox)
        .handler("app.stop", e -> {
          ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
          stopWorker.set(Thread.currentThread());
          stopRunning.countDown();
          try {
            new CountDownLatch(1).await(30, TimeUnit.SECONDS); // until its maximum run time interrupts it
          } catch (InterruptedException limit) {
            limitPassed.countDown();
          }
          goClose.acquireUninterruptibly();
          armed.set(true);
          try {
            self.get().close(); // the kill switch
          } catch (Throwable t) {
            closeFailure.set(t);
          } finally {
            armed.set(false);
          }
          Thread.interrupted();
          closeReturned.countDown();
        })
        .handler("order.paid", e -> ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet())
        .workers(2).maxRunTime(Duration.ofSeconds(20)).lease(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMinutes(10)).clock(time.clock()).scheduler(app)
        .owner("p1").closeGrace(Duration.ofHours(1)).build();
    self.set(p1);

    deliver(receiver, time, "evt_stop", "app.stop");
    p1.start();
    time.runDueTasks();
    assertTrue(stopRunning.await(30, TimeUnit.SECONDS), "the kill switch runs");
    time.advance(Duration.ofSeconds(30)); // its limit (20 s) passes: interrupted, its lease abandoned
    assertTrue(limitPassed.await(30, TimeUnit.SECONDS), "the maximum run time interrupted the kill switch");

    goClose.release(); // the handler calls close()
    assertTrue(closeReturned.await(30, TimeUnit.SECONDS), "close() returned or threw");
    while (inbox.find("acme", "evt_stop").orElseThrow().state() != InboxState.DONE) {
      Thread.onSpinWait(); // its worker records the kill switch's own outcome
    }

    // After the kill switch: a new event arrives, and the regular poll comes round.
    deliver(receiver, time, "evt_after", "order.paid");
    time.advance(Duration.ofMinutes(11));
    InboxState after = inbox.find("acme", "evt_after").orElseThrow().state();
    Throwable thrown = closeFailure.get();

    p1.close(); // the test's own clean-up (a real close if the kill switch's failed)
    Thread stop = stopWorker.get();
    stop.join(30_000);
    assertFalse(stop.isAlive(), "the workers left");

    assertNull(thrown, "the kill switch's close() threw " + thrown + " from keep()'s scheduler.schedule, before"
        + " it set closed: the processor was not closed, and evt_after was then " + after);
    assertEquals(InboxState.PENDING, after, "an event delivered after the kill switch was claimed: processing went"
        + " on (ran " + ran + ")");
    assertEquals(null, ran.get("evt_after"), "an event delivered after the kill switch ran");
  }
}
