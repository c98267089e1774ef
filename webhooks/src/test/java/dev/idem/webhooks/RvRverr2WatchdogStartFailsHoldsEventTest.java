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
 * 14380cbd hands an event back (PENDING, due now, its attempt not counted) when the scheduler
 * cannot take its lease heartbeat's first beat, and makes {@code RunWatchdog.begin} undo itself and
 * throw when the scheduler cannot take the watchdog's first beat; but nothing hands the event back
 * in that second case. {@code WebhookProcessor.runClaimed} calls {@code watchdog.begin(...)} on the
 * worker, after the claim counted the attempt and before the handler: the Error goes up to
 * {@code run()}, which stops the processor ({@code loop.broken}) and ends the heartbeat, and the event
 * stays PROCESSING under a lease nobody renews, its attempt counted as a run without an outcome
 * (one of the 10 before a dead letter), until the lease ends. It never reached a handler, exactly
 * like the heartbeat case docs/webhooks.md promises "goes back to PENDING at once, its attempt not
 * counted".
 *
 * <p>Equally realistic as the heartbeat case round one fixed: an app's
 * {@code Scheduler.of(Executors.newScheduledThreadPool(n))} starts a new core thread on each
 * {@code schedule} until it has n; the heartbeat's first beat takes one thread, the watchdog's first
 * beat (scheduled moments later, on the worker) asks for the next, and {@code Thread.start()} throws
 * {@code OutOfMemoryError: unable to create native thread} after the task was queued. The scheduler
 * here does that on the virtual clock, once, for the watchdog's first beat.
 */
class RvRverr2WatchdogStartFailsHoldsEventTest {
  @TempDir
  Path dir;

  @Test
  void anEventWhoseWatchdogCouldNotStartGoesBackToPendingAtOnce() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    FailingScheduler lazyThreads = FailingScheduler.queueThenFail(time.scheduler(), "RunWatchdog", "begin", 1);
    OutOfMemoryError noThread = lazyThreads.error();
    AtomicInteger p1Ran = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p1 = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> p1Ran.incrementAndGet())
          .lease(Duration.ofMinutes(1)).clock(time.clock()).scheduler(lazyThreads).owner("p1").build();
      p1.start();
      deliver(receiver, time, "evt_1");
      time.runDueTasks(); // the poll claims evt_1 and hands it to a worker, whose watchdog cannot start
      p1.close(); // waits for the worker's run to end (real threads, no sleeps)
      assertEquals(0, p1Ran.get(), "p1 never ran the handler");
      assertSame(noThread, p1.lastPollFailure().orElseThrow(), "the Error stopped p1, as it should");

      InboxEntry held = inbox.find("acme", "evt_1").orElseThrow();
      // No time passes: an event handed back is due now, for the next processor.
      WebhookProcessor p2 = WebhookProcessor.builder(inbox).handler("order.paid", e -> { })
          .lease(Duration.ofMinutes(1)).clock(time.clock()).owner("p2").build();
      int ranOnP2;
      try (p2) {
        ranOnP2 = p2.processDue(1);
      }
      InboxEntry entry = inbox.find("acme", "evt_1").orElseThrow();
      assertEquals(1, ranOnP2, "an event no handler ran (its watchdog could not be scheduled) should be back in"
          + " PENDING at once, as for a heartbeat that could not be scheduled; after p1 it was: state " + held.state()
          + ", attempts " + held.attempts() + ", runs " + held.runs());
      assertEquals(1, entry.attempts(), "the attempt p1 never ran is not counted: attempts " + entry.attempts());
    }
  }
}
