package dev.idem.core.support;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.spi.Sleeper;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Virtual time for tests: a mutable {@link Clock}, a {@link Sleeper} that advances it instead of
 * sleeping (and records every wait), and a manual {@link Scheduler} whose tasks run, in due order,
 * when time is advanced. Nothing here ever sleeps for real. Thread-safe enough for the tests: every
 * field is guarded by this object's lock, and tasks run outside it.
 */
public final class FakeTime {
  public static final Instant EPOCH = Instant.parse("2026-11-02T10:00:00Z");

  private Instant now;
  private final List<Duration> sleeps = new ArrayList<>();
  private final List<Duration> scheduled = new ArrayList<>();
  private final PriorityQueue<Task> tasks = new PriorityQueue<>();
  private long sequence;

  public FakeTime() {
    this(EPOCH);
  }

  public FakeTime(Instant start) {
    this.now = start;
  }

  public synchronized Instant now() {
    return now;
  }

  /** Moves the clock forward without running any task (an attempt taking time, say). */
  public synchronized void tick(Duration d) {
    if (d.isNegative()) {
      throw new IllegalArgumentException("time only moves forward: " + d);
    }
    now = now.plus(d);
  }

  /** Moves the clock forward, running every task that falls due, each at its due instant. */
  public void advance(Duration d) {
    Instant target;
    synchronized (this) {
      target = now.plus(d);
    }
    while (true) {
      Task next;
      synchronized (this) {
        next = tasks.peek();
        if (next == null || next.due.isAfter(target)) {
          now = target;
          return;
        }
        tasks.poll();
        if (next.due.isAfter(now)) {
          now = next.due;
        }
      }
      next.run();
    }
  }

  /**
   * Runs scheduled tasks in due order, advancing the clock to each, until none is left.
   *
   * @return how many tasks ran
   */
  public int runUntilIdle() {
    int ran = 0;
    while (true) {
      Task next;
      synchronized (this) {
        next = tasks.poll();
        if (next == null) {
          return ran;
        }
        if (next.due.isAfter(now)) {
          now = next.due;
        }
      }
      if (next.run()) {
        ran++;
      }
      if (ran > 10_000) {
        throw new AssertionError("scheduler never goes idle");
      }
    }
  }

  /** Tasks scheduled and neither run nor cancelled. */
  public synchronized int pendingTasks() {
    return (int) tasks.stream().filter(t -> !t.cancelled).count();
  }

  /** Every wait the sleeper was asked for, in order. */
  public synchronized List<Duration> sleeps() {
    return List.copyOf(sleeps);
  }

  /** Every delay the scheduler was asked for, in order. */
  public synchronized List<Duration> scheduledDelays() {
    return List.copyOf(scheduled);
  }

  /** Sleeps plus scheduled delays: what either driver waited, in order. */
  public synchronized List<Duration> waits() {
    List<Duration> all = new ArrayList<>(sleeps);
    all.addAll(scheduled);
    return all;
  }

  public Clock clock() {
    return new Clock() {
      @Override
      public ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("tests use UTC");
      }

      @Override
      public Instant instant() {
        return now();
      }
    };
  }

  /** A sleeper that records the wait and advances the clock; it honours a pending interrupt. */
  public Sleeper sleeper() {
    return d -> {
      if (Thread.interrupted()) {
        throw new InterruptedException("interrupted before sleeping");
      }
      synchronized (this) {
        sleeps.add(d);
      }
      advance(d);
    };
  }

  /** A scheduler whose tasks run only when this time is advanced. */
  public Scheduler scheduler() {
    return (task, delay) -> {
      synchronized (this) {
        scheduled.add(delay);
        Task t = new Task(now.plus(delay), sequence++, task);
        tasks.add(t);
        return t;
      }
    };
  }

  private static final class Task implements Comparable<Task>, Future<Object> {
    final Instant due;
    final long seq;
    final Runnable body;
    volatile boolean cancelled;
    volatile boolean done;

    Task(Instant due, long seq, Runnable body) {
      this.due = due;
      this.seq = seq;
      this.body = body;
    }

    boolean run() {
      if (cancelled || done) {
        return false;
      }
      done = true;
      body.run();
      return true;
    }

    @Override
    public int compareTo(Task o) {
      int c = due.compareTo(o.due);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      if (done) {
        return false;
      }
      cancelled = true;
      return true;
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public boolean isDone() {
      return done || cancelled;
    }

    @Override
    public Object get() {
      return null;
    }

    @Override
    public Object get(long timeout, TimeUnit unit) {
      return null;
    }
  }
}
