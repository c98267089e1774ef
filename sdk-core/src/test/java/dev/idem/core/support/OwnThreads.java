package dev.idem.core.support;

import dev.idem.core.IdempotentExecutor;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * Tasks on threads of their own, for tests whose tasks wait for each other. On a 2-core machine
 * the common pool has one thread, and from Java 21 on its async tasks queue on it, so a task that
 * waits for another would wait for ever: {@code CompletableFuture.supplyAsync} without an executor
 * hung the close tests on JDK 25.
 */
public final class OwnThreads {
  private OwnThreads() {
  }

  /**
   * Runs {@code task} on a new daemon thread.
   *
   * @return completed with its result, or with what it threw (as {@code supplyAsync} would be)
   */
  public static <T> CompletableFuture<T> supply(Supplier<T> task) {
    CompletableFuture<T> result = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        result.complete(task.get());
      } catch (Throwable e) {
        result.completeExceptionally(e);
      }
    }, "test-task");
    t.setDaemon(true);
    t.start();
    return result;
  }

  /**
   * Closes {@code idem} on a thread of its own and returns once close has either returned or is
   * waiting, with the executor closed (never a sleep: the closing thread's state says).
   *
   * @return completed when close returns
   */
  public static CompletableFuture<Void> closeUntilItWaits(IdempotentExecutor idem) {
    AtomicReference<Thread> closer = new AtomicReference<>();
    CompletableFuture<Void> closed = supply(() -> {
      closer.set(Thread.currentThread());
      idem.close();
      return null;
    });
    while (!closed.isDone() && (closer.get() == null || closer.get().getState() != Thread.State.TIMED_WAITING
        || !idem.isClosed())) {
      Thread.onSpinWait();
    }
    return closed;
  }
}
