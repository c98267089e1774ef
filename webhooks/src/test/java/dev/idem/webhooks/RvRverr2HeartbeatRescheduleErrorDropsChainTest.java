package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 14380cbd makes a beat's ticket current only once the scheduler returned from {@code schedule}:
 * a scheduler that queues the beat and then throws leaves it stale. That is right for
 * {@code begin()}, which undoes itself and hands its event back; but {@code LeaseHeartbeat.beat}
 * reschedules the chain the same way ({@code BeatChain.rescheduleLocked}, in its finally), and
 * there the Error ends the chain for good: the beat it queued is stale, nothing schedules another
 * (the processor, stopped by the Error, begins no run), and the leases of the handlers still
 * running lapse within one lease. Another processor then claims their events and runs them beside
 * the handlers still running: processed twice. docs/webhooks.md promises the opposite for an Error
 * in the processor's timers: "the heartbeat goes on renewing the leases of the handlers still
 * running, so another processor does not run their events beside them". Before 14380cbd
 * ({@code ++current} before {@code schedule}) the queued beat was the current one and carried the
 * chain on, so this passed: a regression.
 *
 * <p>The Error is the realistic one of round one's tests: {@code Scheduler.of(newScheduledThreadPool(n))}
 * starts its core threads lazily; {@code delayedExecute} queues the task, then {@code ensurePrestart()}
 * cannot start the next thread ({@code OutOfMemoryError: unable to create native thread}); the
 * queued task runs on a thread the pool already has. The scheduler here does that on the virtual
 * clock, once, for the heartbeat's first reschedule. The handler blocks on a latch on its real
 * worker thread; no sleeps.
 */
class RvRverr2HeartbeatRescheduleErrorDropsChainTest {
  @TempDir
  Path dir;

  @Test
  void aRescheduleTheSchedulerQueuedThenFailedStillRenewsTheRunningHandlersLease() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    FailingScheduler lazyThreads = FailingScheduler.queueThenFail(time.scheduler(), "LeaseHeartbeat", "beat", 1);
    OutOfMemoryError noThread = lazyThreads.error();
    CountDownLatch p1Running = new CountDownLatch(1);
    CountDownLatch p1MayReturn = new CountDownLatch(1);
    AtomicInteger p2Ran = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p1 = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            p1Running.countDown();
            while (true) {
              try {
                p1MayReturn.await();
                return;
              } catch (InterruptedException ignored) {
                // a long, careful handler: goes on until done
              }
            }
          })
          .lease(Duration.ofMinutes(1)).clock(time.clock()).scheduler(lazyThreads).owner("p1").build();
      try {
        p1.start();
        deliver(receiver, time, "evt_1");
        time.runDueTasks(); // the poll claims evt_1 and hands it to a worker
        assertTrue(p1Running.await(30, TimeUnit.SECONDS), "p1's handler runs");

        time.advance(Duration.ofSeconds(20)); // the first beat renews, its reschedule queues then throws
        assertSame(noThread, p1.lastPollFailure().orElseThrow(), "the Error stopped p1, as it should");

        // p1's handler runs on; its heartbeat should go on renewing its lease (the docs' promise).
        for (int i = 0; i < 15; i++) {
          time.advance(Duration.ofSeconds(20));
        }
        WebhookProcessor p2 = WebhookProcessor.builder(inbox).handler("order.paid", e -> p2Ran.incrementAndGet())
            .lease(Duration.ofMinutes(1)).clock(time.clock()).owner("p2").build();
        int ranOnP2;
        try (p2) {
          ranOnP2 = p2.processDue(1);
        }
        InboxEntry entry = inbox.find("acme", "evt_1").orElseThrow();
        assertEquals(0, ranOnP2, "evt_1's handler still runs on p1, so p2 must not run it beside it; but p1's"
            + " heartbeat stopped at the reschedule that failed, its lease lapsed, and p2 ran it: state "
            + entry.state() + ", attempts " + entry.attempts() + ", runs " + entry.runs());
      } finally {
        p1MayReturn.countDown();
        p1.close();
      }
    }
  }
}
