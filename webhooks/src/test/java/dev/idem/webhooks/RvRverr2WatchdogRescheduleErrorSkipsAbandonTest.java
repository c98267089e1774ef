package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code RunWatchdog.beat} interrupts the runs past their maximum run time and removes them from
 * its list, then reschedules (for the runs left) under its lock, and only after that calls each
 * exceeded run's {@code onExceeded} ({@code heartbeat.abandon(e)}: its lease no longer renewed).
 * An Error from the scheduler at that reschedule (144bc58b sends it to the poll loop) skips the
 * abandon: the run was interrupted and dropped by the watchdog, but its lease is renewed by the
 * heartbeat as if it were within its limit, and since the watchdog no longer lists it, nothing
 * abandons it later. A hung handler (ignoring the interrupt: what the limit is for) then holds its
 * event for as long as the stopped processor stays open; docs/webhooks.md promises that after an
 * Error in a timer the heartbeat renews "the handlers still running", and that a run past its
 * maximum run time lets its lease lapse so that another processor runs the event.
 *
 * <p>Two hung runs (A from 0:00, B from 1:30; limit 4 min, a beat a minute): the fifth beat
 * exceeds A and reschedules for B; the scheduler queues that beat and then throws {@code
 * OutOfMemoryError: unable to create native thread}, as a lazily-threaded {@code
 * ScheduledThreadPoolExecutor} does. Virtual clock; the handlers block on latches on their real
 * worker threads; no sleeps. Fails before and after 14380cbd alike.
 */
class RvRverr2WatchdogRescheduleErrorSkipsAbandonTest {
  @TempDir
  Path dir;

  @Test
  void aRunTheWatchdogInterruptedHasItsLeaseLetGoEvenIfTheRescheduleFails() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    FailingScheduler lazyThreads = FailingScheduler.queueThenFail(time.scheduler(), "RunWatchdog", "beat", 5);
    OutOfMemoryError noThread = lazyThreads.error();
    CountDownLatch aRunning = new CountDownLatch(1);
    CountDownLatch bRunning = new CountDownLatch(1);
    CountDownLatch mayReturn = new CountDownLatch(1);
    List<String> ranOnP2 = new CopyOnWriteArrayList<>();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p1 = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            (e.eventId().equals("evt_a") ? aRunning : bRunning).countDown();
            while (true) {
              try {
                mayReturn.await();
                return;
              } catch (InterruptedException hung) {
                // hung: ignores the interrupt
              }
            }
          })
          .workers(2).lease(Duration.ofMinutes(1)).maxRunTime(Duration.ofMinutes(4))
          .clock(time.clock()).scheduler(lazyThreads).owner("p1").build();
      try {
        p1.start();
        deliver(receiver, time, "evt_a");
        time.runDueTasks();
        assertTrue(aRunning.await(30, TimeUnit.SECONDS), "A runs");
        time.advance(Duration.ofSeconds(90)); // one watchdog beat behind it
        deliver(receiver, time, "evt_b");
        time.runDueTasks();
        assertTrue(bRunning.await(30, TimeUnit.SECONDS), "B runs");

        for (int i = 0; i < 12; i++) { // to 5:30: the fifth beat exceeds A; its reschedule fails
          time.advance(Duration.ofSeconds(20));
        }
        assertSame(noThread, p1.lastPollFailure().orElseThrow(), "the Error stopped p1, as it should");
        for (int i = 0; i < 9; i++) { // to 8:30: A's lease, let go at 5:00, long lapsed
          time.advance(Duration.ofSeconds(20));
        }
        WebhookProcessor p2 = WebhookProcessor.builder(inbox).handler("order.paid", e -> ranOnP2.add(e.eventId()))
            .lease(Duration.ofMinutes(1)).clock(time.clock()).owner("p2").build();
        try (p2) {
          p2.processDue(10);
        }
        InboxEntry a = inbox.find("acme", "evt_a").orElseThrow();
        assertTrue(ranOnP2.contains("evt_a"), "A was interrupted past its maximum run time 3.5 minutes ago, so its"
            + " lease should have been let go and another processor run evt_a; but the watchdog's reschedule threw"
            + " before heartbeat.abandon, and p1 still renews it: p2 ran " + ranOnP2 + ", evt_a " + a.state()
            + ", attempts " + a.attempts());
      } finally {
        mayReturn.countDown();
        p1.close();
      }
    }
  }
}
