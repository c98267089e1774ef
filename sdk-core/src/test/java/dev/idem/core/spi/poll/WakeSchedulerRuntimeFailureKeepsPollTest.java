package dev.idem.core.spi.poll;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Regression test (review of 2026-12-08): a wake the scheduler failed lost the regular polls.
 *
 * Review of fix 2cb86196 (PollLoop, a RuntimeException other than RejectedExecutionException from
 * the scheduler).
 *
 * <p>The owner (outbox dispatcher, webhook processor) has a started loop polling every second on an
 * app-supplied {@link Scheduler}. A wake arrives while the scheduler fails once with an
 * IllegalStateException (a wrapper's own check, a transient fault); afterwards it works again.
 *
 * <p>Expected: the loop is neither broken (only an Error breaks it) nor refused (only a
 * RejectedExecutionException stops it), so it keeps its regular polls; at worst the wake is lost.
 * Before the fix, {@code scheduleLocked} cancels the already scheduled regular poll and (new in the fix)
 * forgets it ({@code next = null}) before asking the scheduler for the wake's poll; when that
 * throws a RuntimeException, neither poll exists any more and nothing records it ({@code brokenBy},
 * {@code lastFailure()}, {@code isOffline()} all say healthy): the loop never polls again until
 * some later wake, so due retries and recovered work wait forever on a quiet system.
 */
class WakeSchedulerRuntimeFailureKeepsPollTest {
  @Test
  void aWakeTheSchedulerFailsWithARuntimeExceptionDoesNotCostTheRegularPolls() {
    VirtualTime time = new VirtualTime();
    Scheduler virtual = time.scheduler();
    List<Duration> polls = new ArrayList<>();
    AtomicBoolean failOnce = new AtomicBoolean();
    PollLoop loop = PollLoop.builder(WakeSchedulerRuntimeFailureKeepsPollTest.class, "idem-test",
        () -> polls.add(Duration.between(VirtualTime.DEFAULT_START, time.now())))
        .clock(time.clock()).interval(Duration.ofSeconds(1)).maxInterval(Duration.ofSeconds(10))
        .scheduler((task, delay) -> {
          if (failOnce.compareAndSet(true, false)) {
            throw new IllegalStateException("scheduler hiccup");
          }
          return virtual.schedule(task, delay);
        }).build();
    try {
      loop.start();
      time.advance(Duration.ofMillis(500)); // the first poll at 0; the next is due at 1 s
      failOnce.set(true);
      try {
        loop.wake();
      } catch (IllegalStateException thrownToTheWaker) {
        // the waker got it; what matters here is the loop afterwards
      }

      time.advance(Duration.ofSeconds(10));

      assertEquals(11, polls.size(), "the loop, neither broken (" + loop.brokenBy() + ") nor offline ("
          + loop.isOffline() + ", lastFailure " + loop.lastFailure() + "), keeps polling every second; polls "
          + polls + ", tasks pending " + time.pendingTasks());
    } finally {
      loop.close();
    }
  }
}
