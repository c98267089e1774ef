package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
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
 * 9bccf8c8 asks the scheduler a second time when a reschedule fails, and each attempt makes its own
 * ticket current before asking. When the FIRST attempt was queued before the scheduler threw (a
 * lazily-threaded {@code ScheduledThreadPoolExecutor} that cannot start its next thread: the task is
 * in the queue and runs on the thread the pool has) and the SECOND throws before queueing (the heap
 * ran out allocating the second {@code ScheduledFutureTask}), the second attempt has taken the
 * current ticket away from the queued beat: it runs stale and does nothing, and no task carries the
 * current ticket. The heartbeat is over while the handler runs on; its lease lapses and another
 * processor runs the event beside it: processed twice. This contradicts docs/webhooks.md's new
 * sentence, which ends the beats only for "a scheduler that fails both times (and queued neither)":
 * here the scheduler queued the first, and that beat would have carried the chain on had its ticket
 * not been taken by the retry (a fix can keep both attempts' tickets valid until one is claimed).
 * The watchdog shares BeatChain: the same sequence leaves a hung run unbounded.
 *
 * <p>Two {@link FailingScheduler}s stacked: the heartbeat's first reschedule is queued then fails,
 * its retry fails before queueing. Virtual clock; the handler blocks on a latch; no sleeps.
 */
class RvRverr4HeartbeatRetryNotQueuedOrphansQueuedBeatTest {
  @TempDir
  Path dir;

  @Test
  void aQueuedFirstBeatStillCarriesTheChainWhenTheRetryFailsBeforeQueueing() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    FailingScheduler noThread = FailingScheduler.queueThenFail(time.scheduler(), "LeaseHeartbeat", "beat", 1);
    FailingScheduler thenNoHeap = FailingScheduler.failBeforeQueueing(noThread, "LeaseHeartbeat", "beat", 2);
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
          .lease(Duration.ofMinutes(1)).clock(time.clock()).scheduler(thenNoHeap).owner("p1").build();
      try {
        p1.start();
        deliver(receiver, time, "evt_1");
        time.runDueTasks(); // the poll claims evt_1 and hands it to a worker
        assertTrue(p1Running.await(30, TimeUnit.SECONDS), "p1's handler runs");

        // The first beat renews; its reschedule is queued and throws, the retry throws before queueing.
        time.advance(Duration.ofSeconds(20));
        assertNotNull(p1.lastPollFailure().orElse(null), "the Error stopped p1, as it should");

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
        assertEquals(0, ranOnP2, "evt_1's handler still runs on p1, so p2 must not run it beside it; but the"
            + " retried reschedule took the current ticket from the beat the scheduler had queued, p1's heartbeat"
            + " ended, its lease lapsed, and p2 ran it: state " + entry.state() + ", attempts " + entry.attempts()
            + ", runs " + entry.runs());
      } finally {
        p1MayReturn.countDown();
        p1.close();
      }
    }
  }
}
