package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review: one handler that hangs (a call without a timeout) takes a new worker every lease period,
 * because the processor re-claims its own still-running event once the lease has expired, and
 * nothing renews the lease, interrupts the run or keeps the event off that worker. Once every
 * worker runs the same hung event, no other event is ever processed: all webhook processing of the
 * app stops, silently, while the endpoint keeps answering 200.
 *
 * <p>The same for a handler that is merely slower than the lease: its every success is discarded.
 *
 * <p>Fake clock and scheduler (polls run on the test thread); the workers are real threads, waited
 * for on latches, never a sleep.
 */
class ReviewHungHandlerTest {
  static final Instant T0 = ReceiverTest.T0;

  @TempDir
  Path dir;

  @Test
  void oneHungHandlerStopsTheProcessingOfEveryOtherEvent() throws Exception {
    VirtualTime time = new VirtualTime(T0);
    CountDownLatch release = new CountDownLatch(1);
    Semaphore hungEntries = new Semaphore(0);
    AtomicInteger hungRunning = new AtomicInteger();
    AtomicInteger hungMaxConcurrent = new AtomicInteger();
    CountDownLatch okRan = new CountDownLatch(1);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("report.slow", e -> {
            hungMaxConcurrent.accumulateAndGet(hungRunning.incrementAndGet(), Math::max);
            hungEntries.release();
            try {
              release.await(); // a call that never returns
            } finally {
              hungRunning.decrementAndGet();
            }
          })
          .handler("order.paid", e -> okRan.countDown())
          .workers(2).lease(Duration.ofMinutes(1)).pollInterval(Duration.ofSeconds(1))
          .clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
      try {
        p.start();
        deliver(receiver, time, "evt_hung", "report.slow");
        time.runDueTasks();
        assertTrue(hungEntries.tryAcquire(30, TimeUnit.SECONDS), "the hung handler started");

        time.advance(Duration.ofSeconds(61)); // past its first lease: renewed, and never claimed again here

        deliver(receiver, time, "evt_ok", "order.paid");
        time.advance(Duration.ofHours(1));
        boolean okProcessed = okRan.await(10, TimeUnit.SECONDS);
        // A re-run would have been claimed by the polls of the advances above, on this thread, each
        // claim a row in the attempt history: read it rather than wait for a run that should not come.
        boolean reRun = inbox.attempts("acme", "evt_hung").size() > 1 || hungEntries.tryAcquire();

        assertTrue(okProcessed, "an ordinary event accepted after one handler hung is still processed within an"
            + " hour; actual: never (state " + inbox.find("acme", "evt_ok").orElseThrow().state() + "), because the"
            + " hung event was re-claimed by this same processor (re-run while its first run still hangs: " + reRun
            + ", at most " + hungMaxConcurrent.get() + " runs of it at once) until it held every worker");
        assertEquals(1, hungMaxConcurrent.get(), "each (source, event id) at most once at a time");
      } finally {
        release.countDown();
        p.close();
      }
    }
  }

  /**
   * The same cause for a handler that is only slow: one that succeeds after 5.5 minutes, on the
   * default 5-minute lease. Before the lease was renewed, each run's success was thrown away as
   * "stale" because the processor re-claimed the event from itself when the lease ran out, the
   * re-run was re-claimed in turn, and after ten successful runs the event was a dead letter said
   * to have killed the process ("the process died during 10 runs"). Now its one run counts.
   */
  @Test
  void aHandlerSlightlySlowerThanTheLeaseRunsOnceAndItsSuccessCounts() throws Exception {
    VirtualTime time = new VirtualTime(T0);
    Semaphore entries = new Semaphore(0);
    java.util.concurrent.LinkedBlockingQueue<CountDownLatch> running = new java.util.concurrent.LinkedBlockingQueue<>();
    AtomicInteger succeeded = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("report.build", e -> {
            CountDownLatch done = new CountDownLatch(1);
            running.add(done);
            entries.release();
            done.await(); // the report takes 5.5 minutes: released by the test when its clock says so
            succeeded.incrementAndGet();
          })
          .clock(time.clock()).scheduler(time.scheduler()).owner("p1").build(); // default 4 workers, 5 min lease
      try {
        p.start();
        deliver(receiver, time, "evt_report", "report.build");
        time.runDueTasks();
        assertTrue(entries.tryAcquire(30, TimeUnit.SECONDS), "run 1 started");
        time.advance(Duration.ofMinutes(5).plusSeconds(1)); // past its first lease: renewed, not re-claimed
        time.advance(Duration.ofSeconds(29)); // 5.5 minutes after it started, the run succeeds
        running.take().countDown();
        spinUntil(() -> inbox.find("acme", "evt_report").orElseThrow().state() != InboxState.PROCESSING);
        InboxEntry entry = inbox.find("acme", "evt_report").orElseThrow();
        assertEquals(InboxState.DONE, entry.state(), "a handler that returned normally marks its event DONE; actual: "
            + entry.state() + " after " + succeeded.get() + " runs that all returned normally, outcomes "
            + inbox.attempts("acme", "evt_report").stream().map(a -> a.outcome().orElse("-")).toList()
            + ", last error '" + entry.lastError().orElse("") + "'");
        assertEquals(List.of("done"), inbox.attempts("acme", "evt_report").stream()
            .map(a -> a.outcome().orElse("-")).toList(), "one run, its outcome recorded");
        assertEquals(1, succeeded.get());
      } finally {
        running.forEach(CountDownLatch::countDown);
        p.close();
      }
    }
  }

  private static void spinUntil(java.util.function.BooleanSupplier done) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("not within 30 s");
      }
      Thread.onSpinWait();
    }
  }
}
