package dev.idem.core.testing;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.spi.Sleeper;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;

/**
 * Fake time for tests: one {@link Clock} that only moves when told, a {@link Sleeper} that moves it
 * instead of blocking, and a {@link Scheduler} whose tasks run when the clock passes their time.
 * Hand all three to an executor (or a guard, an outbox, a webhook processor), and backoff, leases,
 * Retry-After and retention become instant and exact:
 *
 * <pre>{@code
 * VirtualTime time = new VirtualTime(Instant.parse("2026-01-01T00:00:00Z"));
 * IdempotentExecutor idem = IdempotentExecutor.builder()
 *     .clock(time.clock()).sleeper(time.sleeper()).scheduler(time.scheduler()).build();
 * ...
 * assertEquals(List.of(Duration.ofSeconds(2)), time.sleeps());
 * }</pre>
 *
 * <p>Nothing here ever sleeps for real. Thread-safe: every field is guarded by this object's lock.
 * Scheduled tasks run on the thread that moves the clock ({@link #advance}, {@link #runDueTasks},
 * {@link #runNextTask}, {@link #runUntilIdle}, or a sleeper's caller), outside the lock, each at
 * its due instant, in due order (ties in the order they were scheduled); an exception a task throws
 * reaches that thread.
 */
public final class VirtualTime {
  /** Where {@link #VirtualTime()} starts: 2026-01-01T00:00:00Z. */
  public static final Instant DEFAULT_START = Instant.parse("2026-01-01T00:00:00Z");
  /** How many tasks runUntilIdle, or an advance past its target, runs before it gives up. */
  private static final int MAX_TASKS = 10_000;

  private final List<Duration> waits = new ArrayList<>();
  private final List<Duration> sleeperWaits = new ArrayList<>();
  private final List<Duration> scheduledDelays = new ArrayList<>();
  private final PriorityQueue<Task> tasks = new PriorityQueue<>();
  private Instant now;
  private long sequence;

  /**
   * Starts at {@code start}.
   *
   * @param start the initial instant
   * @throws NullPointerException if {@code start} is null
   */
  public VirtualTime(Instant start) {
    this.now = Objects.requireNonNull(start, "start");
  }

  /** Starts at {@link #DEFAULT_START}. */
  public VirtualTime() {
    this(DEFAULT_START);
  }

  /**
   * The current virtual instant.
   *
   * @return the current virtual instant
   */
  public synchronized Instant now() {
    return now;
  }

  /**
   * A clock that reads this virtual time, in UTC.
   *
   * @return a clock that reads this virtual time, in UTC
   */
  public Clock clock() {
    return new VirtualClock(ZoneOffset.UTC);
  }

  /**
   * A sleeper that records the wait and advances the clock by it, running the tasks that fall due.
   * Like {@link Thread#sleep}, it throws at once, clearing the flag, if the thread is interrupted.
   *
   * @return a sleeper that records the wait and advances the clock by it
   */
  public Sleeper sleeper() {
    return d -> {
      if (Thread.interrupted()) {
        throw new InterruptedException("interrupted before sleeping");
      }
      synchronized (this) {
        waits.add(d);
        sleeperWaits.add(d);
      }
      advance(d);
    };
  }

  /**
   * A scheduler whose tasks run once the clock reaches their time; the delay is recorded too.
   * Cancelling a task's future before it runs keeps it from running.
   *
   * @return a scheduler whose tasks run once the clock reaches their time
   */
  public Scheduler scheduler() {
    return (task, delay) -> {
      synchronized (this) {
        waits.add(delay);
        scheduledDelays.add(delay);
        Task t = new Task(now.plus(delay), sequence++, task, new CompletableFuture<>());
        tasks.add(t);
        return t.handle;
      }
    };
  }

  /**
   * Every wait requested so far, through the sleeper or the scheduler, in the order requested.
   *
   * @return every wait requested so far, through the sleeper or the scheduler
   */
  public synchronized List<Duration> sleeps() {
    return List.copyOf(waits);
  }

  /**
   * The waits requested through the sleeper only, in order.
   *
   * @return the waits requested through the sleeper
   */
  public synchronized List<Duration> sleeperWaits() {
    return List.copyOf(sleeperWaits);
  }

  /**
   * The delays requested through the scheduler only, in order.
   *
   * @return the delays requested through the scheduler
   */
  public synchronized List<Duration> scheduledDelays() {
    return List.copyOf(scheduledDelays);
  }

  /**
   * The total of {@link #sleeps()}.
   *
   * @return the total of {@link #sleeps()}
   */
  public synchronized Duration totalSlept() {
    return waits.stream().reduce(Duration.ZERO, Duration::plus);
  }

  /**
   * Moves the clock forward by {@code d} and runs every task that falls due on the way, each at its
   * due instant.
   *
   * <p>A {@link #jump} made meanwhile (by a task that simulates a pause inside itself, or by another
   * thread) is kept: the clock ends at the later of {@code now + d} and where the jump left it,
   * never back in time. Tasks that the jump made due, up to where the clock then is, run in this
   * same advance, at that instant (not at their own, which has passed), so that when this returns
   * no task due at or before {@link #now()} is left; tasks due after it are not run.
   *
   * @param d how far; zero or positive
   * @throws IllegalArgumentException if {@code d} is negative
   * @throws IllegalStateException if more than 10,000 tasks due after {@code now + d} ran: tasks
   *     keep jumping the clock past the next ones they schedule, and the advance would never end
   */
  public void advance(Duration d) {
    Instant target;
    synchronized (this) {
      target = now.plus(forward(d));
    }
    int pastTarget = 0;
    for (Task next = takeDue(target); next != null; next = takeDue(target)) {
      // Only tasks that jumps brought in count: an advance over days of a task every second is
      // fine, but one whose tasks always jump past their next turn would never return.
      if (next.at.isAfter(target) && ++pastTarget > MAX_TASKS) {
        throw new IllegalStateException("the clock never settles: more than " + MAX_TASKS + " tasks ran past "
            + target + ", each brought due by a jump made during the advance");
      }
      next.run();
    }
  }

  /**
   * Takes the first task, moving the clock to its time, if there is one due by {@code until} (any,
   * if null) or by the clock itself if a jump moved it past {@code until}; else moves the clock to
   * {@code until} (if given and ahead) and returns null. The clock never moves back.
   */
  private synchronized Task takeDue(Instant until) {
    Instant horizon = until == null || now.isAfter(until) ? now : until;
    Task next = nextLive();
    if (next == null || (until != null && next.at.isAfter(horizon))) {
      if (until != null) {
        now = horizon;
      }
      return null;
    }
    tasks.poll();
    if (next.at.isAfter(now)) {
      now = next.at;
    }
    return next;
  }

  /**
   * The first task that has neither run nor been cancelled, left in the queue; cancelled tasks ahead
   * of it are dropped. Dropping them here, never by moving the clock to them, keeps a cancelled
   * task from stopping {@link #runNextTask} or pulling {@link #runUntilIdle}'s clock to an instant
   * at which nothing was due. Caller holds the lock.
   */
  private Task nextLive() {
    Task next = tasks.peek();
    while (next != null && next.handle.isDone()) {
      tasks.poll();
      next = tasks.peek();
    }
    return next;
  }

  /**
   * Moves the clock forward without running any task: a JVM that paused, a renewal thread that
   * starved, an attempt that took time. Tasks that fell due run at the next {@link #advance}; a
   * jump made by a task while an advance runs it is kept by that advance, which then runs them.
   *
   * @param d how far; zero or positive
   * @throws IllegalArgumentException if {@code d} is negative
   */
  public synchronized void jump(Duration d) {
    now = now.plus(forward(d));
  }

  /** Runs every task due now without moving the clock. */
  public void runDueTasks() {
    advance(Duration.ZERO);
  }

  /**
   * Advances to the next task that has not been cancelled and runs it (with any other due at the
   * same instant or before). Cancelled tasks ahead of it are dropped and do not move the clock, as
   * {@link #nextDue()} and {@link #pendingTasks()} already skip them.
   *
   * @return true if a task ran, false if none is pending (none scheduled, or all cancelled)
   */
  public boolean runNextTask() {
    Duration until;
    synchronized (this) {
      Task next = nextLive();
      if (next == null) {
        return false;
      }
      until = next.at.isAfter(now) ? Duration.between(now, next.at) : Duration.ZERO;
    }
    advance(until);
    return true;
  }

  /**
   * Runs scheduled tasks in due order, moving the clock to each, until none is left (tasks that
   * schedule others included). Cancelled tasks are dropped without moving the clock: it ends at the
   * last task that ran.
   *
   * @return how many tasks ran (cancelled ones are not counted)
   * @throws IllegalStateException if more than 10,000 tasks ran: the scheduler never goes idle
   */
  public int runUntilIdle() {
    int ran = 0;
    for (Task next = takeDue(null); next != null; next = takeDue(null)) {
      if (next.run()) {
        ran++;
      }
      if (ran > MAX_TASKS) {
        throw new IllegalStateException("the scheduler never goes idle: more than 10,000 tasks ran");
      }
    }
    return ran;
  }

  /**
   * How many scheduled tasks have neither run nor been cancelled.
   *
   * @return how many scheduled tasks have neither run nor been cancelled
   */
  public synchronized int pendingTasks() {
    return (int) tasks.stream().filter(t -> !t.handle.isDone()).count();
  }

  /**
   * When the earliest task that has neither run nor been cancelled falls due.
   *
   * @return its due instant, or empty if there is none
   */
  public synchronized Optional<Instant> nextDue() {
    return tasks.stream().filter(t -> !t.handle.isDone()).map(t -> t.at).min(Instant::compareTo);
  }

  private static Duration forward(Duration d) {
    if (d.isNegative()) {
      throw new IllegalArgumentException("time does not go backwards: " + d);
    }
    return d;
  }

  private record Task(Instant at, long seq, Runnable body, CompletableFuture<Void> handle)
      implements Comparable<Task> {
    /** Runs the task unless it was cancelled; true if it ran. */
    boolean run() {
      if (handle.isDone()) {
        return false;
      }
      try {
        body.run();
      } finally {
        handle.complete(null);
      }
      return true;
    }

    @Override
    public int compareTo(Task o) {
      int c = at.compareTo(o.at);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }
  }

  private final class VirtualClock extends Clock {
    private final ZoneId zone;

    VirtualClock(ZoneId zone) {
      this.zone = zone;
    }

    @Override
    public ZoneId getZone() {
      return zone;
    }

    @Override
    public Clock withZone(ZoneId z) {
      return new VirtualClock(z);
    }

    @Override
    public Instant instant() {
      return now();
    }
  }
}
