package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code WebhookProcessor.processDue} calls {@code heartbeat.begin(e)} right after its claim, with
 * nothing around it: an Error from the scheduler there (an app's lazily-threaded
 * {@code ScheduledThreadPoolExecutor} that cannot start its next thread:
 * {@code OutOfMemoryError: unable to create native thread}, thrown by {@code ensurePrestart()} after
 * the beat was queued) leaves the claimed event listed as running and never ended, and the call
 * throws the bare Error: the processor is not stopped ({@code lastPollFailure()} is empty, and 144bc58b's
 * rule that an Error is named to the next call does not apply), the next calls work, but they
 * never claim that event again (it is listed as running), nor does anyone else: the heartbeat,
 * whose beat was queued, renews its lease at every beat for as long as the processor lives. For an
 * app that drives processing with processDue, that is the app's lifetime: one event never runs.
 *
 * <p>The scheduler here queues the beat, then throws, once, as {@code delayedExecute} does. Fake
 * clock and scheduler; processDue runs on the test's thread.
 */
class RvRverrProcessDueBeatStartFailsHoldsEventTest {
  @TempDir
  Path dir;

  @Test
  void anEventWhoseHeartbeatCouldNotStartInProcessDueRunsLater() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    FailingScheduler lazyThreads = FailingScheduler.queueThenFail(time.scheduler(), "LeaseHeartbeat", "begin", 1);
    OutOfMemoryError noThread = lazyThreads.error();
    AtomicInteger ran = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      try (WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> ran.incrementAndGet())
          .lease(Duration.ofMinutes(1)).clock(time.clock()).scheduler(lazyThreads).owner("p1").build()) {
        deliver(receiver, time, "evt_1");
        assertSame(noThread, assertThrows(OutOfMemoryError.class, () -> p.processDue(10)));

        // The app goes on driving processing, as the processor did not stop: ten leases later the
        // event should have run (here or anywhere).
        int later = 0;
        for (int i = 0; i < 10; i++) {
          time.advance(Duration.ofMinutes(1));
          later += p.processDue(10);
        }
        WebhookProcessor other = WebhookProcessor.builder(inbox).handler("order.paid", e -> ran.incrementAndGet())
            .lease(Duration.ofMinutes(1)).clock(time.clock()).owner("p2").build();
        try (other) {
          later += other.processDue(10);
        }
        InboxEntry entry = inbox.find("acme", "evt_1").orElseThrow();
        assertEquals(1, ran.get(), "ten leases after the failed begin, evt_1 has run once (processDue calls here: "
            + later + " events); it is " + entry.state() + ", attempts " + entry.attempts() + ", its lease still"
            + " renewed by the processor that lists it as running; lastPollFailure " + p.lastPollFailure());
      }
    }
  }
}
