package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An Error from the scheduler while a poll starts the lease heartbeat for an event it just claimed
 * ({@code WebhookProcessor.dispatch} calls {@code heartbeat.begin(e)} before its try block, so the
 * event whose begin failed is neither handed back nor ended; only the rest of the batch is)
 * leaves that event listed as running on a processor that has stopped, and its heartbeat, which
 * 144bc58b documents as "going on renewing the leases of the handlers still running", renews the
 * lease of an event that no handler runs, at every beat, for as long as the stopped processor stays
 * open. No other processor can run it meanwhile: the event is stuck, not handed back as the docs
 * promise for an event a poll claimed but could not run ("goes back to PENDING at once, its
 * attempt not counted, with the rest of that poll's claims").
 *
 * <p>The Error is the realistic one: an app's {@code Scheduler.of(Executors.newScheduledThreadPool(n))}
 * starts its core threads lazily, and {@code ScheduledThreadPoolExecutor.delayedExecute} first
 * queues the task, then {@code ensurePrestart()} starts a new thread, whose {@code start()} throws
 * {@code OutOfMemoryError: unable to create native thread} out of {@code schedule}, with the beat
 * already queued. The scheduler here does the same on the virtual clock: queue, then throw, once,
 * for the heartbeat's first beat. Fake clock and scheduler, no thread of the test's own.
 */
class RvRverrBeatStartFailsHoldsEventTest {
  @TempDir
  Path dir;

  @Test
  void anEventWhoseHeartbeatCouldNotStartIsNotHeldByTheStoppedProcessorForever() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    FailingScheduler lazyThreads = FailingScheduler.queueThenFail(time.scheduler(), "LeaseHeartbeat", "begin", 1);
    OutOfMemoryError noThread = lazyThreads.error();
    AtomicInteger p1Ran = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p1 = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> p1Ran.incrementAndGet())
          .lease(Duration.ofMinutes(1)).clock(time.clock()).scheduler(lazyThreads).owner("p1").build();
      try {
        p1.start();
        deliver(receiver, time, "evt_1");
        time.runDueTasks(); // the poll claims evt_1; starting its heartbeat throws
        assertSame(noThread, p1.lastPollFailure().orElseThrow(), "the Error stopped p1, as it should");

        // Ten leases later: p1 has stopped and never ran the event; another processor should.
        time.advance(Duration.ofMinutes(10));
        WebhookProcessor p2 = WebhookProcessor.builder(inbox).handler("order.paid", e -> { })
            .lease(Duration.ofMinutes(1)).clock(time.clock()).owner("p2").build();
        int ranOnP2;
        try (p2) {
          ranOnP2 = p2.processDue(1);
        }
        InboxEntry entry = inbox.find("acme", "evt_1").orElseThrow();
        assertEquals(0, p1Ran.get(), "p1 never ran the event");
        assertEquals(1, ranOnP2, "ten leases after p1 stopped, another processor runs the event p1 claimed and"
            + " never ran; but p1's heartbeat still renews its lease: state " + entry.state() + ", attempts "
            + entry.attempts() + ", runs " + entry.runs());
      } finally {
        p1.close();
      }
    }
  }
}
