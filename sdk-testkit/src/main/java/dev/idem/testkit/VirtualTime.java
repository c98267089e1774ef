package dev.idem.testkit;

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
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/**
 * Fake time for tests: one {@link Clock} that only moves when told, a {@link Sleeper} that moves it
 * instead of blocking, and a {@link Scheduler} whose tasks run when the clock passes their time.
 * Hand all three to an executor, and backoff and Retry-After become instant and exact:
 *
 * <pre>{@code
 * VirtualTime time = new VirtualTime(Instant.parse("2026-01-01T00:00:00Z"));
 * IdempotentExecutor idem = IdempotentExecutor.builder()
 *     .clock(time.clock()).sleeper(time.sleeper()).scheduler(time.scheduler()).build();
 * ...
 * assertEquals(List.of(Duration.ofSeconds(2)), time.sleeps());
 * }</pre>
 *
 * <p>Thread-safe. Scheduled tasks run on the thread that advances the clock (or calls
 * {@link #runDueTasks()}), outside the lock.
 */
public final class VirtualTime {
  private final List<Duration> sleeps = new ArrayList<>();
  private final PriorityQueue<Task> tasks = new PriorityQueue<>();
  private Instant now;
  private long sequence;

  /** @param start the initial instant */
  public VirtualTime(Instant start) {
    this.now = Objects.requireNonNull(start, "start");
  }

  /** Starts at 2026-01-01T00:00:00Z. */
  public VirtualTime() {
    this(Instant.parse("2026-01-01T00:00:00Z"));
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
   * A sleeper that records the wait and advances the clock by it (running due tasks).
   *
   * @return a sleeper that records the wait and advances the clock by it (running due tasks)
   */
  public Sleeper sleeper() {
    return d -> {
      synchronized (this) {
        sleeps.add(d);
      }
      advance(d);
    };
  }

  /**
   * A scheduler whose tasks run once the clock reaches their time; the delay is recorded too.
   *
   * @return a scheduler whose tasks run once the clock reaches their time
   */
  public Scheduler scheduler() {
    return (task, delay) -> {
      synchronized (this) {
        sleeps.add(delay);
        Task t = new Task(now.plus(delay), sequence++, task);
        tasks.add(t);
        return t.handle;
      }
    };
  }

  /**
   * Every wait requested so far, through the sleeper or the scheduler, in order.
   *
   * @return every wait requested so far, through the sleeper or the scheduler, in order
   */
  public synchronized List<Duration> sleeps() {
    return List.copyOf(sleeps);
  }

  /**
   * The total of {@link #sleeps()}.
   *
   * @return the total of {@link #sleeps()}
   */
  public synchronized Duration totalSlept() {
    return sleeps.stream().reduce(Duration.ZERO, Duration::plus);
  }

  /**
   * Moves the clock forward by {@code d} and runs every task that came due, in time order.
   *
   * @param d how far; zero or positive
   * @throws IllegalArgumentException if {@code d} is negative
   */
  public void advance(Duration d) {
    if (d.isNegative()) {
      throw new IllegalArgumentException("time does not go backwards: " + d);
    }
    Instant target;
    synchronized (this) {
      target = now.plus(d);
    }
    while (true) {
      Task next;
      synchronized (this) {
        next = tasks.peek();
        if (next == null || next.at.isAfter(target)) {
          now = target;
          return;
        }
        tasks.poll();
        if (next.at.isAfter(now)) {
          now = next.at;
        }
      }
      next.run();
    }
  }

  /** Runs every task due now without moving the clock. */
  public void runDueTasks() {
    advance(Duration.ZERO);
  }

  /**
   * Advances to the next scheduled task and runs it; returns false if none is scheduled.
   *
   * @return true if a task ran, false if none is scheduled
   */
  public boolean runNextTask() {
    Duration until;
    synchronized (this) {
      Task next = tasks.peek();
      if (next == null) {
        return false;
      }
      until = next.at.isAfter(now) ? Duration.between(now, next.at) : Duration.ZERO;
    }
    advance(until);
    return true;
  }

  /**
   * How many scheduled tasks have not run yet (cancelled ones included until their time).
   *
   * @return how many scheduled tasks have not run yet (cancelled ones included until their time)
   */
  public synchronized int pendingTasks() {
    return tasks.size();
  }

  private static final class Task implements Comparable<Task> {
    final Instant at;
    final long seq;
    final Runnable body;
    final CompletableFuture<Void> handle = new CompletableFuture<>();

    Task(Instant at, long seq, Runnable body) {
      this.at = at;
      this.seq = seq;
      this.body = body;
    }

    void run() {
      if (!handle.isDone()) {
        body.run();
        handle.complete(null);
      }
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
