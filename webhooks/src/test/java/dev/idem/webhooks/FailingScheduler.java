package dev.idem.webhooks;

import dev.idem.core.spi.Scheduler;
import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scheduler that fails as a {@code ScheduledThreadPoolExecutor} can, once, at the {@code nth}
 * schedule called from a named method (read from the stack), on the test's scheduler (a
 * {@code VirtualTime}'s):
 * <ul>
 *   <li>{@link #queueThenFail}: lazily threaded, when the JVM cannot start its next thread:
 *       {@code delayedExecute} queues the task first, then {@code ensurePrestart()} throws
 *       {@code OutOfMemoryError: unable to create native thread} out of {@code schedule}, and the
 *       queued task runs later on a thread the pool already has;</li>
 *   <li>{@link #failBeforeQueueing}: the heap ran out while it allocated the task or grew its
 *       queue ({@code OutOfMemoryError: Java heap space}): nothing queued.</li>
 * </ul>
 */
final class FailingScheduler implements Scheduler {
  private final Scheduler queue;
  private final String className;
  private final String method;
  private final int nth;
  private final boolean queued;
  private final AtomicInteger calls = new AtomicInteger();
  private final OutOfMemoryError error;

  private FailingScheduler(Scheduler queue, String className, String method, int nth, boolean queued) {
    this.queue = queue;
    this.className = className;
    this.method = method;
    this.nth = nth;
    this.queued = queued;
    this.error = new OutOfMemoryError(queued
        ? "unable to create native thread: possibly out of memory or process/resource limits reached"
        : "Java heap space");
  }

  /**
   * @param simpleClassName the class whose method schedules: "LeaseHeartbeat", "RunWatchdog"
   * @param method its method: "begin", "beat"
   * @param nth which schedule from that method fails, 1 for the first
   * @return a scheduler that queues that task, then throws
   */
  static FailingScheduler queueThenFail(Scheduler queue, String simpleClassName, String method, int nth) {
    return new FailingScheduler(queue, "." + simpleClassName, method, nth, true);
  }

  /** As {@link #queueThenFail}, but the failing schedule queues nothing. */
  static FailingScheduler failBeforeQueueing(Scheduler queue, String simpleClassName, String method, int nth) {
    return new FailingScheduler(queue, "." + simpleClassName, method, nth, false);
  }

  /** {@return the Error thrown} */
  OutOfMemoryError error() {
    return error;
  }

  @Override
  public Future<?> schedule(Runnable task, Duration delay) {
    boolean fails = StackWalker.getInstance().walk(frames -> frames.anyMatch(
        f -> f.getClassName().endsWith(className) && f.getMethodName().equals(method)))
        && calls.incrementAndGet() == nth;
    if (fails && !queued) {
      throw error;
    }
    Future<?> future = queue.schedule(task, delay);
    if (fails) {
      throw error;
    }
    return future;
  }
}
