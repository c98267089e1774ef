package dev.idem.core.spi.poll;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Regression test (review of 2026-12-08): a failed reschedule stopped polling while the loop said healthy.
 *
 * Review of fe14e43f (PollLoop.scheduleLocked, a RuntimeException from the scheduler at the
 * reschedule after a poll).
 *
 * <p>What the user does: an owner like the outbox dispatcher runs a loop every second on an
 * app-supplied {@link Scheduler}; its poll hands work to workers and reports the outcome later
 * ({@code Deliverer} calls {@link PollLoop#progressed()} when a delivery ends). Once, as the loop
 * reschedules after a poll, the scheduler throws an IllegalStateException (a transient fault); it
 * works again afterwards. The delivery then ends and the owner reports progress. No wake comes (a
 * quiet system: due retries only).
 *
 * <p>Expected: the loop, neither broken nor refused, keeps polling (the class promises a poll every
 * interval; the fix's own reason is that "due retries and recovered work wait forever on a quiet
 * system" otherwise), or at the very least stays visibly offline.
 *
 * <p>Before the fix, {@code scheduleLocked} only calls {@code backoff.noProgress(..)} and returns with
 * {@code next == null}; nothing ever schedules another poll (no timer retries the reschedule), and
 * the delivery's later {@code progressed()} clears the offline state and lastFailure: the loop has
 * stopped for good while it reports healthy.
 */
class RescheduleFailureStaysOfflineTest {
  @Test
  void aTransientSchedulerFailureAtTheRescheduleDoesNotStopPollingForGood() {
    VirtualTime time = new VirtualTime();
    Scheduler virtual = time.scheduler();
    List<Duration> polls = new ArrayList<>();
    AtomicBoolean failOnce = new AtomicBoolean();
    PollLoop loop = PollLoop.builder(RescheduleFailureStaysOfflineTest.class, "idem-test", () -> {
          polls.add(Duration.between(VirtualTime.DEFAULT_START, time.now()));
          if (polls.size() == 1) {
            failOnce.set(true); // the reschedule right after this poll fails once
          }
        })
        .clock(time.clock()).interval(Duration.ofSeconds(1)).maxInterval(Duration.ofSeconds(10))
        .scheduler((task, delay) -> {
          if (failOnce.compareAndSet(true, false)) {
            throw new IllegalStateException("scheduler hiccup");
          }
          return virtual.schedule(task, delay);
        }).build();
    try {
      loop.start();
      time.advance(Duration.ofMillis(100)); // the first poll ran; its reschedule failed
      boolean offlineAfterFailure = loop.isOffline();
      loop.progressed(); // the delivery the poll started ends well, on a worker
      time.advance(Duration.ofSeconds(30));

      assertTrue(polls.size() >= 10 || loop.isOffline(),
          "after one failed reschedule the loop polled " + polls.size() + " time(s) in 30 s (" + polls
          + "), yet says offline=" + loop.isOffline() + " (was " + offlineAfterFailure + " right after the failure),"
          + " lastFailure=" + loop.lastFailure() + ", brokenBy=" + loop.brokenBy() + "; tasks pending "
          + time.pendingTasks());
    } finally {
      loop.close();
    }
  }
}
