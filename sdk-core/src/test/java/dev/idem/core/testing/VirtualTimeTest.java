package dev.idem.core.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** The one fake clock: what the executor, the guard, the outbox and the webhook tests rely on. */
class VirtualTimeTest {
  private static final Instant T0 = Instant.parse("2026-03-01T12:00:00Z");
  private final VirtualTime time = new VirtualTime(T0);
  private final List<String> ran = new ArrayList<>();

  @Test
  void tasksRunInDueOrderEachAtItsOwnInstantWhenTheClockPassesThem() {
    time.scheduler().schedule(() -> ran.add("b@" + time.now()), Duration.ofSeconds(2));
    time.scheduler().schedule(() -> ran.add("a@" + time.now()), Duration.ofSeconds(1));
    time.scheduler().schedule(() -> ran.add("c@" + time.now()), Duration.ofSeconds(2));

    time.advance(Duration.ofSeconds(5));

    assertEquals(List.of("a@" + T0.plusSeconds(1), "b@" + T0.plusSeconds(2), "c@" + T0.plusSeconds(2)), ran);
    assertEquals(T0.plusSeconds(5), time.now());
    assertEquals(T0.plusSeconds(5), time.clock().instant());
  }

  @Test
  void aJumpMovesTheClockWithoutRunningTasksAndTheNextAdvanceRunsThem() {
    time.scheduler().schedule(() -> ran.add("renewal"), Duration.ofSeconds(10));
    time.jump(Duration.ofSeconds(31)); // a paused JVM
    assertEquals(List.of(), ran);
    assertEquals(1, time.pendingTasks());
    assertEquals(Optional.of(T0.plusSeconds(10)), time.nextDue());

    time.runDueTasks();
    assertEquals(List.of("renewal"), ran);
    assertEquals(T0.plusSeconds(31), time.now(), "running overdue tasks does not move the clock back");
    assertEquals(Optional.empty(), time.nextDue());
  }

  /**
   * A task that jumps the clock (a GC pause, a suspended laptop, a store call that took 4 s inside
   * the task) keeps its jump: advance does not move the clock back to where it was asked to go,
   * and what the jump made due runs in the same advance, while what lies beyond it waits.
   */
  @Test
  void aJumpMadeByATaskDuringAnAdvanceIsKeptAndWhatItMadeDueRuns() {
    time.scheduler().schedule(() -> {
      ran.add("paused@" + time.now());
      time.jump(Duration.ofSeconds(4));
      time.scheduler().schedule(() -> ran.add("next@" + time.now()), Duration.ofSeconds(6));
    }, Duration.ofSeconds(10));
    time.scheduler().schedule(() -> ran.add("overdue@" + time.now()), Duration.ofSeconds(12));
    time.scheduler().schedule(() -> ran.add("later@" + time.now()), Duration.ofSeconds(15));

    time.advance(Duration.ofSeconds(10));

    assertEquals(T0.plusSeconds(14), time.now(), "the task's 4 s jump was undone");
    assertEquals(List.of("paused@" + T0.plusSeconds(10), "overdue@" + T0.plusSeconds(14)), ran,
        "a task the jump made due runs in the same advance, at the jumped time, never back in time");
    assertEquals(Optional.of(T0.plusSeconds(15)), time.nextDue());
    assertEquals(2, time.pendingTasks());
  }

  /** A jump inside a task that lands short of the advance's target changes nothing. */
  @Test
  void aJumpShortOfTheTargetEndsAtTheTarget() {
    time.scheduler().schedule(() -> time.jump(Duration.ofSeconds(4)), Duration.ofSeconds(10));
    time.scheduler().schedule(() -> ran.add("at@" + time.now()), Duration.ofSeconds(20));

    time.advance(Duration.ofSeconds(30));

    assertEquals(List.of("at@" + T0.plusSeconds(20)), ran);
    assertEquals(T0.plusSeconds(30), time.now());
  }

  /**
   * A task that reschedules itself closer than it jumps would keep an advance running forever;
   * advance stops it the way runUntilIdle stops a scheduler that never goes idle.
   */
  @Test
  void aTaskThatAlwaysJumpsPastItsNextTurnIsStoppedNotLooping() {
    Runnable[] tick = new Runnable[1];
    tick[0] = () -> {
      time.scheduler().schedule(tick[0], Duration.ofSeconds(1));
      time.jump(Duration.ofSeconds(2));
    };
    time.scheduler().schedule(tick[0], Duration.ofSeconds(1));

    assertThrows(IllegalStateException.class, () -> time.advance(Duration.ofSeconds(1)));
  }

  /** Without jumps, an advance runs as many tasks as fall due, however many. */
  @Test
  void aLongAdvanceRunsEveryTaskDueWithinIt() {
    int[] ticks = {0};
    Runnable[] tick = new Runnable[1];
    tick[0] = () -> {
      ticks[0]++;
      time.scheduler().schedule(tick[0], Duration.ofSeconds(1));
    };
    time.scheduler().schedule(tick[0], Duration.ofSeconds(1));

    time.advance(Duration.ofSeconds(20_000));

    assertEquals(20_000, ticks[0]);
    assertEquals(T0.plusSeconds(20_000), time.now());
  }

  @Test
  void aCancelledTaskNeverRunsAndIsNotPending() {
    Future<?> f = time.scheduler().schedule(() -> ran.add("x"), Duration.ofSeconds(1));
    assertTrue(f.cancel(false));
    assertEquals(0, time.pendingTasks());
    assertEquals(0, time.runUntilIdle());
    assertEquals(List.of(), ran);
  }

  /** A cancelled task is dropped where it stands: the clock stops at the last task that ran. */
  @Test
  void cancelledTasksDoNotMoveTheClock() {
    time.scheduler().schedule(() -> ran.add("live"), Duration.ofSeconds(2));
    Future<?> later = time.scheduler().schedule(() -> ran.add("cancelled"), Duration.ofSeconds(9));
    assertTrue(later.cancel(false));

    assertEquals(1, time.runUntilIdle());
    assertEquals(List.of("live"), ran);
    assertEquals(T0.plusSeconds(2), time.now(), "not moved on to the cancelled task's instant");

    Future<?> only = time.scheduler().schedule(() -> ran.add("x"), Duration.ofSeconds(3));
    assertTrue(only.cancel(false));
    assertFalse(time.runNextTask(), "nothing to run: the only task was cancelled");
    assertEquals(T0.plusSeconds(2), time.now());
  }

  @Test
  void theSleeperAdvancesTheClockAndEveryWaitIsRecordedByWhereItCameFrom() throws Exception {
    time.scheduler().schedule(() -> ran.add("poll"), Duration.ofSeconds(3));
    time.sleeper().sleep(Duration.ofSeconds(5));

    assertEquals(List.of("poll"), ran, "a sleep runs what falls due during it");
    assertEquals(T0.plusSeconds(5), time.now());
    assertEquals(List.of(Duration.ofSeconds(3), Duration.ofSeconds(5)), time.sleeps(), "in the order requested");
    assertEquals(List.of(Duration.ofSeconds(5)), time.sleeperWaits());
    assertEquals(List.of(Duration.ofSeconds(3)), time.scheduledDelays());
    assertEquals(Duration.ofSeconds(8), time.totalSlept());
  }

  @Test
  void anInterruptedSleeperThrowsLikeThreadSleep() {
    Thread.currentThread().interrupt();
    assertThrows(InterruptedException.class, () -> time.sleeper().sleep(Duration.ofSeconds(1)));
    assertFalse(Thread.interrupted(), "the flag is cleared, as Thread.sleep clears it");
    assertEquals(T0, time.now());
  }

  @Test
  void timeDoesNotGoBackwards() {
    assertThrows(IllegalArgumentException.class, () -> time.advance(Duration.ofSeconds(-1)));
    assertThrows(IllegalArgumentException.class, () -> time.jump(Duration.ofSeconds(-1)));
  }

  @Test
  void runNextTaskMovesToTheNextTaskAndRunUntilIdleRunsTasksThatScheduleOthers() {
    assertFalse(time.runNextTask());
    time.scheduler().schedule(() -> time.scheduler().schedule(() -> ran.add("second"), Duration.ofMinutes(1)),
        Duration.ofSeconds(30));
    assertTrue(time.runNextTask());
    assertEquals(T0.plusSeconds(30), time.now());
    assertEquals(1, time.runUntilIdle());
    assertEquals(List.of("second"), ran);
    assertEquals(T0.plusSeconds(90), time.now());
  }
}
