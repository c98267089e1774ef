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
 * d662d680 keeps the heartbeat's chain alive past a reschedule that the scheduler QUEUED and then
 * failed (a lazily-threaded {@code ScheduledThreadPoolExecutor} that cannot start its next thread).
 * It does nothing for the other way {@code schedule} throws an Error: before the task is queued.
 * {@code ScheduledThreadPoolExecutor.schedule} allocates the {@code ScheduledFutureTask}, and its
 * {@code DelayedWorkQueue.offer} grows its array ({@code Arrays.copyOf}), before the task is in the
 * queue: an {@code OutOfMemoryError: Java heap space} there leaves nothing queued. Then
 * {@code BeatChain.rescheduleLocked} has made a ticket current that no task carries, {@code next}
 * is null, and only a later {@code startLocked()} (a new run begun) would start a chain again; the
 * Error stopped the processor, so none begins. The heartbeat is over while the handler runs on: its
 * lease lapses within one lease and another processor claims the event and runs it beside it:
 * processed twice. docs/webhooks.md promises, for an Error in the processor's timers, "the heartbeat
 * goes on renewing the leases of the handlers still running, so another processor does not run
 * their events beside them"; LeaseHeartbeat's Javadoc says the same ("the beats go on renewing the
 * runs still going, since their handlers do"), and its beat already carries its chain on past an
 * OutOfMemoryError thrown while it lists the events, so heap exhaustion is an Error the code means to
 * survive here.
 *
 * <p>The scheduler throws a heap OutOfMemoryError, without queueing, once, for the heartbeat's first
 * reschedule; on the virtual clock. The handler blocks on a latch on its real worker thread; no
 * sleeps.
 */
class RvRverr3HeartbeatRescheduleHeapOomEndsChainTest {
  @TempDir
  Path dir;

  @Test
  void aRescheduleThatFailsBeforeQueueingStillLeavesTheRunningHandlersLeaseRenewed() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    FailingScheduler tightHeap = FailingScheduler.failBeforeQueueing(time.scheduler(), "LeaseHeartbeat", "beat", 1);
    OutOfMemoryError heap = tightHeap.error();
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
          .lease(Duration.ofMinutes(1)).clock(time.clock()).scheduler(tightHeap).owner("p1").build();
      try {
        p1.start();
        deliver(receiver, time, "evt_1");
        time.runDueTasks(); // the poll claims evt_1 and hands it to a worker
        assertTrue(p1Running.await(30, TimeUnit.SECONDS), "p1's handler runs");

        time.advance(Duration.ofSeconds(20)); // the first beat renews; its reschedule throws, nothing queued
        assertSame(heap, p1.lastPollFailure().orElseThrow(), "the Error stopped p1, as it should");

        // p1's handler runs on (well within the default maximum run time); its lease should stay p1's.
        for (int i = 0; i < 6; i++) {
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
            + " heartbeat ended at the reschedule that threw before queueing, its lease lapsed, and p2 ran it: state "
            + entry.state() + ", attempts " + entry.attempts() + ", runs " + entry.runs());
      } finally {
        p1MayReturn.countDown();
        p1.close();
      }
    }
  }
}
