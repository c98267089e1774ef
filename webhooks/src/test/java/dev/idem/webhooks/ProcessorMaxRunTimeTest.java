package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Jitter;
import dev.idem.core.RetryPolicy;
import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A handler that never returns (a downstream call without a timeout) held its event and a worker
 * for as long as the process lived: the lease was renewed and nothing bounded a run. Now a run
 * longer than the maximum run time (default 15 minutes) is interrupted and counts as a failed
 * attempt, retried or dead-lettered by the retry policy.
 *
 * <p>Fake clock and scheduler (polls, renewals and the run-time limit on the test thread); the
 * workers are real threads, waited for on semaphores and latches, never a sleep.
 */
class ProcessorMaxRunTimeTest {
  @TempDir
  Path dir;

  @Test
  void aHangingHandlerIsInterruptedAfterTheDefaultMaxRunTimeAndRetried() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    Semaphore entered = new Semaphore(0);
    Semaphore interrupted = new Semaphore(0);
    CountDownLatch never = new CountDownLatch(1);
    AtomicInteger runs = new AtomicInteger();
    Semaphore recorded = new Semaphore(0);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      deliver(receiver(inbox, time), time, "evt_hang");
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            runs.incrementAndGet();
            entered.release();
            try {
              never.await(); // a call that never returns; it answers an interrupt
            } catch (InterruptedException ex) {
              interrupted.release();
              throw ex;
            }
          })
          .listener(a -> {
            if (a instanceof WebhookActivity.RetryScheduled) {
              recorded.release();
            }
          })
          .random(() -> 0.5).pollInterval(Duration.ofMinutes(1)).closeGrace(Duration.ZERO)
          .clock(time.clock()).scheduler(time.scheduler()).owner("p1").build(); // default lease, max run time
      try {
        p.start();
        time.runDueTasks();
        assertTrue(entered.tryAcquire(30, TimeUnit.SECONDS), "run 1 started");

        time.advance(Duration.ofMinutes(15)); // not past the 15 minutes: still running, renewed
        assertFalse(interrupted.tryAcquire(), "not interrupted before the maximum run time");
        assertEquals(InboxState.PROCESSING, inbox.find("acme", "evt_hang").orElseThrow().state());

        // The limit is timed by a beat every quarter of it, from the run's start (nothing else
        // runs): interrupted at the fifth, 18:45 after it began. There exactly (15:00 + 3:45), so
        // that nothing claims the retry before it is read below: it is due 0.5 s later, timed to
        // 18:45.5, and the next poll is at 19:00. An advance past those ran them on this thread
        // while the worker recorded the overrun: whenever the worker had let go of the run first,
        // they claimed the retry, and the event read PROCESSING (run 2) instead of PENDING.
        time.advance(Duration.ofMinutes(3).plusSeconds(45));
        assertTrue(interrupted.tryAcquire(30, TimeUnit.SECONDS), "the hanging handler was interrupted once it had"
            + " run for longer than the default maximum run time of 15 minutes; actual: still running, its lease renewed, its"
            + " worker held (state " + inbox.find("acme", "evt_hang").orElseThrow().state() + ")");
        assertTrue(recorded.tryAcquire(30, TimeUnit.SECONDS), "its outcome was recorded");
        InboxEntry entry = inbox.find("acme", "evt_hang").orElseThrow();
        assertEquals(InboxState.PENDING, entry.state(), "a failed attempt, to be retried by the policy, not"
            + " yet claimed again: " + entry + ", runs " + runs.get() + ", " + inbox.attempts("acme", "evt_hang"));
        assertEquals(1, entry.attempts());
        assertEquals(ReceiverTest.T0.plus(Duration.ofMinutes(18).plusSeconds(45).plusMillis(500)), entry.nextAttemptAt(),
            "recorded at the fifth beat, 18:45, with the retry 0.5 s after it");
        assertEquals(List.of("retry"), inbox.attempts("acme", "evt_hang").stream()
            .map(a -> a.outcome().orElse("-")).toList());
        assertTrue(entry.lastError().orElse("").contains("maximum run time of PT15M"), entry.lastError().orElse(""));

        // The retry (0.5 s) is claimed by the next poll once the worker let go of the run, which it
        // does just after telling the listener: a poll before that skips the event as still running
        // here, so a minute of polls at a time until the retry starts.
        assertTrue(advanceUntil(time, Duration.ofMinutes(1), entered), "the retry ran, on a worker the hung run"
            + " freed");
        assertEquals(2, runs.get());
      } finally {
        p.close();
      }
    }
  }

  @Test
  void overrunningEveryAttemptEndsAsADeadLetterByThePolicy() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    Semaphore entered = new Semaphore(0);
    CountDownLatch never = new CountDownLatch(1);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      deliver(receiver(inbox, time), time, "evt_hang");
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            entered.release();
            never.await();
          })
          .retryPolicy(RetryPolicy.builder().maxAttempts(2).baseDelay(Duration.ofSeconds(10))
              .maxDelay(Duration.ofMinutes(1)).deadline(Duration.ofHours(1)).jitter(Jitter.NONE).build())
          .classifier(failure -> java.util.Optional.of(FailureKind.PERMANENT)) // overruns are retried anyway
          .maxRunTime(Duration.ofMinutes(2)).lease(Duration.ofMinutes(1)).pollInterval(Duration.ofSeconds(30))
          .closeGrace(Duration.ZERO)
          .clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
      try {
        p.start();
        time.runDueTasks();
        assertTrue(entered.tryAcquire(30, TimeUnit.SECONDS), "run 1 started");
        time.advance(Duration.ofSeconds(150)); // the fifth beat of 30 s: interrupted
        ProcessorFixedClockTest.spinUntil(() -> inbox.find("acme", "evt_hang").orElseThrow().state()
            == InboxState.PENDING, () -> inbox.find("acme", "evt_hang").orElseThrow() + " "
            + inbox.attempts("acme", "evt_hang"));
        // The retry, 10 s later, is claimed by a poll once the worker let go of run 1.
        assertTrue(advanceUntil(time, Duration.ofSeconds(30), entered), "run 2 started");
        // Run 2 began on its worker at some point of the last advance: 2.5 minutes after the
        // latest, and the beats of 30 s from then, are within these 3 minutes.
        time.advance(Duration.ofMinutes(3));
        ProcessorFixedClockTest.spinUntil(() -> inbox.find("acme", "evt_hang").orElseThrow().state()
            == InboxState.DEAD, () -> inbox.find("acme", "evt_hang").orElseThrow() + " "
            + inbox.attempts("acme", "evt_hang"));
        assertEquals(List.of("retry", "dead"), inbox.attempts("acme", "evt_hang").stream()
            .map(a -> a.outcome().orElse("-")).toList());
        assertEquals(2, inbox.find("acme", "evt_hang").orElseThrow().attempts());
      } finally {
        p.close();
      }
    }
  }

  @Test
  void theMaxRunTimeMustBePositive() {
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      assertThrows(IllegalArgumentException.class, () -> WebhookProcessor.builder(inbox).maxRunTime(Duration.ZERO));
      assertThrows(NullPointerException.class, () -> WebhookProcessor.builder(inbox).maxRunTime(null));
    }
  }

  /**
   * Advances {@code step} at a time until {@code started} is released (at most 300 steps). A worker
   * lets go of a run (no longer skipped as running here) just after telling the listener of its
   * outcome, so a poll may come before that, and the claim waits for a later one.
   */
  private static boolean advanceUntil(VirtualTime time, Duration step, Semaphore started) throws InterruptedException {
    for (int i = 0; i < 300; i++) {
      time.advance(step);
      if (started.tryAcquire(100, TimeUnit.MILLISECONDS)) {
        return true;
      }
    }
    return false;
  }
}
