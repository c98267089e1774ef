package dev.idem.server.support;

import dev.idem.core.spi.Scheduler;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/**
 * A clock that moves only when told, and a scheduler whose tasks run when it passes their time,
 * so leases and retention are tested without sleeping. Thread-safe; tasks run on the advancing
 * thread, outside the lock.
 */
public final class ManualTime {
  private record Task(Instant due, long seq, Runnable run, CompletableFuture<Void> handle) {}

  private final List<Task> tasks = new ArrayList<>();
  private Instant now;
  private long seq;

  public ManualTime(Instant start) {
    this.now = start;
  }

  public ManualTime() {
    this(Instant.parse("2026-01-01T00:00:00Z"));
  }

  public synchronized Instant now() {
    return now;
  }

  public Clock clock() {
    ManualTime self = this;
    return new Clock() {
      @Override
      public ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(ZoneId zone) {
        return this;
      }

      @Override
      public Instant instant() {
        return self.now();
      }
    };
  }

  public Scheduler scheduler() {
    return (task, delay) -> {
      CompletableFuture<Void> handle = new CompletableFuture<>();
      synchronized (this) {
        tasks.add(new Task(now.plus(delay), seq++, task, handle));
      }
      return handle;
    };
  }

  /** Moves the clock, running every task that falls due on the way, in time order. */
  public void advance(Duration d) {
    Instant target;
    synchronized (this) {
      target = now.plus(d);
    }
    while (true) {
      Task next;
      synchronized (this) {
        next = tasks.stream().filter(t -> !t.due().isAfter(target))
            .min(Comparator.comparing(Task::due).thenComparingLong(Task::seq)).orElse(null);
        if (next == null) {
          now = target;
          return;
        }
        tasks.remove(next);
        if (next.due().isAfter(now)) {
          now = next.due();
        }
      }
      if (!next.handle().isCancelled()) {
        next.run().run();
        next.handle().complete(null);
      }
    }
  }

  /** Moves the clock without running any task: a paused JVM, a renewal thread that starved. */
  public synchronized void jump(Duration d) {
    now = now.plus(d);
  }

  /** When the earliest pending task falls due, if any. */
  public synchronized java.util.Optional<Instant> nextDue() {
    return tasks.stream().filter(t -> !t.handle().isCancelled()).map(Task::due).min(Comparator.naturalOrder());
  }

  public synchronized int pendingTasks() {
    return (int) tasks.stream().filter(t -> !t.handle().isCancelled()).count();
  }
}
