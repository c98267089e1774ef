package dev.idem.webhooks;

import dev.idem.core.spi.poll.PollLoop;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The workers' threads of a processor under test ({@link WebhookProcessor.Builder#workerThreads}),
 * of which the next one made after {@link #holdNext()} waits, before it takes its first task, until
 * the test lets it go: a run handed to a worker but not yet begun, held open without sleeps (none of
 * the processor's own code runs there to hold it on). Waits uninterruptibly: close() may interrupt
 * the workers.
 */
final class HeldWorkerThreads implements ThreadFactory {
  private final ThreadFactory threads = PollLoop.daemonThreads("idem-webhooks-worker");
  private final AtomicBoolean holdNext = new AtomicBoolean();
  /** Counted down when the held thread has started and waits before its first task. */
  final CountDownLatch held = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);

  /** The next thread made waits before its first task. */
  void holdNext() {
    holdNext.set(true);
  }

  /** Lets the held thread take its first task. */
  void release() {
    release.countDown();
  }

  @Override
  public Thread newThread(Runnable task) {
    if (!holdNext.compareAndSet(true, false)) {
      return threads.newThread(task);
    }
    return threads.newThread(() -> {
      held.countDown();
      boolean interrupted = false;
      while (true) {
        try {
          release.await();
          break;
        } catch (InterruptedException ex) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
      task.run();
    });
  }
}
