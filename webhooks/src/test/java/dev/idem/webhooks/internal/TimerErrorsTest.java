package dev.idem.webhooks.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.webhooks.internal.ReviewWatchdogDoubleBeatTest.HandScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;

/**
 * An Error in the processor's timers (the maximum run time's watchdog, a retry's timer) goes to the
 * processor's error sink, which stops processing and names it to the next call, instead of ending
 * up unseen in a Future the scheduler keeps. Before the change it left the task: the hand-driven
 * scheduler here threw it on to the test.
 */
class TimerErrorsTest {
  private final List<Map.Entry<Error, String>> reported = new ArrayList<>();
  private final BiConsumer<Error, String> sink = (e, where) -> reported.add(Map.entry(e, where));

  @Test
  void anErrorInTheWatchdogsBeatGoesToTheSink() {
    HandScheduler s = new HandScheduler();
    RunWatchdog w = new RunWatchdog(s, Duration.ofMinutes(4), sink); // a beat a minute; interrupted after 5 beats
    StackOverflowError simulated = new StackOverflowError("simulated");
    RunWatchdog.Run run = w.begin(new Thread(() -> { }), () -> {
      throw simulated;
    });
    for (int i = 0; i < 5; i++) {
      s.period();
    }
    assertTrue(run.exceeded(), "the run was cut at its limit");
    assertEquals(1, reported.size(), "reported once: " + reported);
    assertSame(simulated, reported.get(0).getKey());
    assertEquals("the maximum run time's watchdog", reported.get(0).getValue());
  }

  /**
   * An app's scheduler that fails a reschedule with a RuntimeException (not a refusal): logged, not
   * thrown into the scheduler's thread, and not an Error to stop the processor for.
   */
  @Test
  void aRuntimeExceptionFromTheSchedulerAtABeatIsNotThrownIntoIt() {
    HandScheduler hand = new HandScheduler();
    int[] schedules = {0};
    dev.idem.core.spi.Scheduler failingReschedules = (task, delay) -> {
      if (++schedules[0] > 1) {
        throw new IllegalStateException("simulated: the app's scheduler failed");
      }
      return hand.schedule(task, delay);
    };
    RunWatchdog w = new RunWatchdog(failingReschedules, Duration.ofMinutes(4), sink);
    w.begin(new Thread(() -> { }), () -> { });
    hand.period(); // the first beat; its reschedule fails twice
    assertEquals(3, schedules[0], "the first beat, then its reschedule asked for twice");
    assertEquals(List.of(), reported, "no Error to report");
  }

  @Test
  void anErrorInARetrysTimerGoesToTheSink() {
    HandScheduler s = new HandScheduler();
    OutOfMemoryError simulated = new OutOfMemoryError("simulated");
    RetryTimers timers = new RetryTimers(s, () -> {
      throw simulated;
    }, sink);
    timers.schedule(new EventKey("acme", "evt_1"), 1_000, Duration.ofSeconds(1));
    s.period();
    assertEquals(1, reported.size(), "reported once: " + reported);
    assertSame(simulated, reported.get(0).getKey());
    assertEquals("a retry's timer", reported.get(0).getValue());
    assertEquals(1, timers.elapsed(10).size(), "the wait is over all the same: the poll claims it");
  }
}
