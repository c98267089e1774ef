package dev.idem.webhooks;

import dev.idem.core.spi.Scheduler;
import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scheduler that fails as a lazily threaded {@code ScheduledThreadPoolExecutor} does when the JVM
 * cannot start its next thread: {@code delayedExecute} queues the task first, then
 * {@code ensurePrestart()} throws {@code OutOfMemoryError: unable to create native thread} out of
 * {@code schedule}, and the queued task runs later on a thread the pool already has. Here the task
 * is queued on the test's scheduler (a {@code VirtualTime}'s), and the Error is thrown once, at the
 * {@code nth} schedule called from the named method (read from the stack).
 */
final class QueueThenFailScheduler implements Scheduler {
  private final Scheduler queue;
  private final String className;
  private final String method;
  private final int nth;
  private final AtomicInteger calls = new AtomicInteger();
  private final OutOfMemoryError error = new OutOfMemoryError(
      "unable to create native thread: possibly out of memory or process/resource limits reached");

  private QueueThenFailScheduler(Scheduler queue, String className, String method, int nth) {
    this.queue = queue;
    this.className = className;
    this.method = method;
    this.nth = nth;
  }

  /**
   * @param simpleClassName the class whose method schedules: "LeaseHeartbeat", "RunWatchdog"
   * @param method its method: "begin", "beat"
   * @return a scheduler that fails at the first schedule from that method
   */
  static QueueThenFailScheduler failingOnce(Scheduler queue, String simpleClassName, String method) {
    return failingAt(queue, simpleClassName, method, 1);
  }

  /** As {@link #failingOnce}, failing at the {@code nth} schedule from that method instead. */
  static QueueThenFailScheduler failingAt(Scheduler queue, String simpleClassName, String method, int nth) {
    return new QueueThenFailScheduler(queue, "." + simpleClassName, method, nth);
  }

  /** {@return the Error thrown} */
  OutOfMemoryError error() {
    return error;
  }

  @Override
  public Future<?> schedule(Runnable task, Duration delay) {
    Future<?> queued = queue.schedule(task, delay);
    if (StackWalker.getInstance().walk(frames -> frames.anyMatch(
        f -> f.getClassName().endsWith(className) && f.getMethodName().equals(method)))
        && calls.incrementAndGet() == nth) {
      throw error;
    }
    return queued;
  }
}
