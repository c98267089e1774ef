package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same regression as {@link RvRverr2HeartbeatRescheduleErrorDropsChainTest}, in the maximum
 * run time's watchdog: {@code RunWatchdog.beat} reschedules through {@code BeatChain.rescheduleLocked},
 * and since 14380cbd a beat the scheduler queued before it threw is stale, so the watchdog's chain
 * ends at that Error (nothing restarts it: the processor, stopped by it, begins no run). The runs
 * still going on are then never bounded: a hung handler (one that ignores the interrupt, what the
 * maximum run time exists for) is never interrupted, its lease is never abandoned, and the
 * heartbeat, which docs/webhooks.md says "goes on renewing the leases of the handlers still
 * running" after such an Error, renews it for as long as the stopped processor stays open: the
 * event is held by a hung handler, never run elsewhere, against the documented "a run on the
 * workers is bounded by the maximum run time" (its lease lapses and another processor runs the
 * event). Before 14380cbd the queued beat was current and carried the watchdog on: this passed.
 *
 * <p>The scheduler queues the watchdog's first reschedule, then throws {@code OutOfMemoryError:
 * unable to create native thread}, as a lazily-threaded {@code ScheduledThreadPoolExecutor} does; on
 * the virtual clock. The handler blocks on a latch on its real worker thread; no sleeps.
 */
class RvRverr2WatchdogRescheduleErrorUnboundsRunTest {
  @TempDir
  Path dir;

  @Test
  void aWatchdogRescheduleTheSchedulerQueuedThenFailedStillBoundsTheRun() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    FailingScheduler lazyThreads = FailingScheduler.queueThenFail(time.scheduler(), "RunWatchdog", "beat", 1);
    OutOfMemoryError noThread = lazyThreads.error();
    CountDownLatch p1Running = new CountDownLatch(1);
    CountDownLatch p1MayReturn = new CountDownLatch(1);
    AtomicInteger interrupts = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p1 = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            p1Running.countDown();
            while (true) {
              try {
                p1MayReturn.await();
                return;
              } catch (InterruptedException hung) {
                interrupts.incrementAndGet(); // hung: ignores the interrupt
              }
            }
          })
          .lease(Duration.ofMinutes(1)).maxRunTime(Duration.ofMinutes(4))
          .clock(time.clock()).scheduler(lazyThreads).owner("p1").build();
      try {
        p1.start();
        deliver(receiver, time, "evt_1");
        time.runDueTasks(); // the poll claims evt_1 and hands it to a worker
        assertTrue(p1Running.await(30, TimeUnit.SECONDS), "p1's handler runs");

        time.advance(Duration.ofMinutes(1)); // the watchdog's first beat: its reschedule queues, then throws
        assertSame(noThread, p1.lastPollFailure().orElseThrow(), "the Error stopped p1, as it should");

        // The maximum run time (4 min, at most a quarter more) passes, then more than a lease.
        for (int i = 0; i < 21; i++) {
          time.advance(Duration.ofSeconds(20));
        }
        WebhookProcessor p2 = WebhookProcessor.builder(inbox).handler("order.paid", e -> { })
            .lease(Duration.ofMinutes(1)).clock(time.clock()).owner("p2").build();
        int ranOnP2;
        try (p2) {
          ranOnP2 = p2.processDue(1);
        }
        InboxEntry entry = inbox.find("acme", "evt_1").orElseThrow();
        assertEquals(1, ranOnP2, "8 minutes into a run bounded by a maximum run time of 4 minutes, the hung run"
            + " should have been interrupted and its lease let go, so that another processor runs the event; but the"
            + " watchdog stopped at the reschedule that failed: interrupts seen by the handler " + interrupts.get()
            + ", evt_1 " + entry.state() + ", attempts " + entry.attempts() + ", its lease still renewed by p1");
      } finally {
        p1MayReturn.countDown();
        p1.close();
      }
    }
  }
}
