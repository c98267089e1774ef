package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A beat's reschedule that the scheduler fails (an Error: the processor stops for it) must not end
 * the beats while handlers still run. Reviews rverr2, rverr3 and rverr4 proved, each with a test
 * that failed, three ways it did:
 * <ul>
 *   <li>queued, then failed: a lazily threaded {@code ScheduledThreadPoolExecutor} queues the task,
 *       then cannot start a thread; the queued beat was made stale (14380cbd);</li>
 *   <li>failed before queueing: the heap ran out allocating the task; no task carried the ticket
 *       made current (d662d680);</li>
 *   <li>the first attempt queued then failed, and the retry failed before queueing: the retry took
 *       the chain from the queued beat (9bccf8c8).</li>
 * </ul>
 * Ended, the heartbeat let a running handler's lease lapse and another processor ran its event
 * beside it (processed twice); the watchdog left a hung run unbounded, its lease renewed for as long
 * as the stopped processor stayed open. docs/webhooks.md promises that both go on. Virtual clock;
 * the handlers block on latches on their real worker threads; no sleeps.
 */
class BeatRescheduleFailureTest {
  @TempDir
  Path dir;

  static Stream<Arguments> failures() {
    return Stream.of(
        failure("queued, then no thread", (q, owner) -> FailingScheduler.queueThenFail(q, owner, "beat", 1)),
        failure("no heap, nothing queued", (q, owner) -> FailingScheduler.failBeforeQueueing(q, owner, "beat", 1)),
        failure("queued, then no thread; the retry: no heap, nothing queued", (q, owner) ->
            FailingScheduler.failBeforeQueueing(FailingScheduler.queueThenFail(q, owner, "beat", 1), owner, "beat", 2)));
  }

  private static Arguments failure(String name, BiFunction<Scheduler, String, Scheduler> scheduler) {
    return Arguments.of(Named.of(name, scheduler));
  }

  @ParameterizedTest
  @MethodSource("failures")
  void theHeartbeatGoesOnRenewingTheLeaseOfAHandlerStillRunning(BiFunction<Scheduler, String, Scheduler> failing)
      throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    CountDownLatch p1Running = new CountDownLatch(1);
    CountDownLatch p1MayReturn = new CountDownLatch(1);
    AtomicInteger p2Ran = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p1 = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            p1Running.countDown();
            assertTrue(p1MayReturn.await(1, TimeUnit.MINUTES), "the test let the handler end");
          })
          .lease(Duration.ofMinutes(1)).clock(time.clock()).scheduler(failing.apply(time.scheduler(), "LeaseHeartbeat"))
          .owner("p1").build();
      try {
        p1.start();
        deliver(receiver, time, "evt_1");
        time.runDueTasks(); // the poll claims evt_1 and hands it to a worker
        assertTrue(p1Running.await(30, TimeUnit.SECONDS), "p1's handler runs");

        time.advance(Duration.ofSeconds(20)); // the first beat renews; its reschedule fails
        assertNotNull(p1.lastPollFailure().orElse(null), "the Error stopped p1, as it should");

        for (int i = 0; i < 6; i++) { // two leases; the handler runs on, well within its maximum run time
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
            + " heartbeat ended at the failed reschedule, its lease lapsed, and p2 ran it: state " + entry.state()
            + ", attempts " + entry.attempts() + ", runs " + entry.runs());
      } finally {
        p1MayReturn.countDown();
        p1.close();
      }
    }
  }

  @ParameterizedTest
  @MethodSource("failures")
  void theWatchdogGoesOnBoundingAHungRun(BiFunction<Scheduler, String, Scheduler> failing) throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
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
          .clock(time.clock()).scheduler(failing.apply(time.scheduler(), "RunWatchdog")).owner("p1").build();
      try {
        p1.start();
        deliver(receiver, time, "evt_1");
        time.runDueTasks(); // the poll claims evt_1 and hands it to a worker
        assertTrue(p1Running.await(30, TimeUnit.SECONDS), "p1's handler runs");

        time.advance(Duration.ofMinutes(1)); // the watchdog's first beat: its reschedule fails
        assertNotNull(p1.lastPollFailure().orElse(null), "the Error stopped p1, as it should");

        for (int i = 0; i < 21; i++) { // the maximum run time (4 min, at most a quarter more), then a lease
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
            + " watchdog ended at the failed reschedule: interrupts seen by the handler " + interrupts.get()
            + ", evt_1 " + entry.state() + ", attempts " + entry.attempts());
      } finally {
        p1MayReturn.countDown();
        p1.close();
      }
    }
  }
}
