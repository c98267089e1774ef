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
 * The watchdog's side of {@link RvRverr3HeartbeatRescheduleHeapOomEndsChainTest} (same root cause:
 * {@code BeatChain.rescheduleLocked}). d662d680 carries the maximum run time's watchdog on past a
 * reschedule the scheduler queued and then failed, but not past one that throws before queueing
 * ({@code ScheduledThreadPoolExecutor.schedule} allocates the task and may grow its
 * {@code DelayedWorkQueue} before the task is queued: {@code OutOfMemoryError: Java heap space}).
 * The new ticket is current, no task carries it, {@code next} is null, and only a new run's
 * {@code begin()} would start a chain again; the Error stopped the processor, so none begins. A hung
 * handler (one that ignores the interrupt, what the maximum run time exists for) is then never
 * interrupted and its lease never let go: the heartbeat renews it for as long as the stopped
 * processor stays open, against the documented "a run on the workers is bounded by the maximum run
 * time" and LeaseHeartbeat/BeatChain's claim that a timer Error leaves the timing going on.
 *
 * <p>The scheduler throws a heap OutOfMemoryError, without queueing, once, at the watchdog's first
 * reschedule; on the virtual clock. The handler blocks on a latch on its real worker thread; no
 * sleeps.
 */
class RvRverr3WatchdogRescheduleHeapOomUnboundsRunTest {
  @TempDir
  Path dir;

  @Test
  void aWatchdogRescheduleThatFailsBeforeQueueingStillBoundsTheRun() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    FailingScheduler lazyThreads = FailingScheduler.failBeforeQueueing(time.scheduler(), "RunWatchdog", "beat", 1);
    OutOfMemoryError heap = lazyThreads.error();
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

        time.advance(Duration.ofMinutes(1)); // the watchdog's first beat: its reschedule throws, nothing queued
        assertSame(heap, p1.lastPollFailure().orElseThrow(), "the Error stopped p1, as it should");

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
            + " watchdog stopped at the reschedule that threw before queueing: interrupts seen by the handler " + interrupts.get()
            + ", evt_1 " + entry.state() + ", attempts " + entry.attempts() + ", its lease still renewed by p1");
      } finally {
        p1MayReturn.countDown();
        p1.close();
      }
    }
  }
}
