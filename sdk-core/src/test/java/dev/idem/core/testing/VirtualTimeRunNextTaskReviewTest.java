package dev.idem.core.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Review (testkit): {@link VirtualTime#runNextTask()} says it "advances to the next scheduled task
 * and runs it", and {@link VirtualTime#scheduler()} that cancelling a task's future keeps it from
 * running. With a cancelled task earlier than a live one (an attempt timeout cancelled once the
 * call answered, a backoff cancelled by close), runNextTask advances the clock to the cancelled
 * task's instant, runs nothing and returns true; the live task does not run, while
 * {@link VirtualTime#pendingTasks()} and {@link VirtualTime#nextDue()} already skip the cancelled
 * one. A test that steps with runNextTask then asserts on a task that has not run, at a clock that
 * stopped at an instant nothing was due.
 */
class VirtualTimeRunNextTaskReviewTest {
  @Test
  void runNextTaskRunsTheNextLiveTaskNotACancelledOne() {
    VirtualTime time = new VirtualTime();
    Future<?> timeout = time.scheduler().schedule(() -> {}, Duration.ofSeconds(1));
    AtomicBoolean probeRan = new AtomicBoolean();
    time.scheduler().schedule(() -> probeRan.set(true), Duration.ofSeconds(5));
    timeout.cancel(false);
    assertEquals(Optional.of(VirtualTime.DEFAULT_START.plusSeconds(5)), time.nextDue(), "nextDue skips the cancelled task");

    assertTrue(time.runNextTask());

    assertTrue(probeRan.get(), "the next scheduled (live) task ran");
    assertEquals(VirtualTime.DEFAULT_START.plusSeconds(5), time.now(), "the clock is at that task's instant");
  }
}
