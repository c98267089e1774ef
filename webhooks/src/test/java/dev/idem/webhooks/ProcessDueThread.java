package dev.idem.webhooks;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * An app's own thread that drives {@link WebhookProcessor#processDue} once: what the call returned
 * (or threw), and whether the thread was interrupted when the call returned, which is what the
 * app's next piece of work on that thread would find.
 */
final class ProcessDueThread {
  final Thread thread;
  private final CompletableFuture<Integer> ran = new CompletableFuture<>();
  private final CompletableFuture<Boolean> interruptedAfter = new CompletableFuture<>();

  /** Made, not started: a test may choose the thread for a held clock reading first. */
  ProcessDueThread(IntSupplier call) {
    thread = new Thread(() -> {
      try {
        ran.complete(call.getAsInt());
      } catch (Throwable t) {
        ran.completeExceptionally(t);
      } finally {
        interruptedAfter.complete(Thread.interrupted());
      }
    }, "app-thread");
  }

  ProcessDueThread start() {
    thread.start();
    return this;
  }

  /** What processDue returned; throws what it threw. */
  int ran() throws Exception {
    return ran.get(30, TimeUnit.SECONDS);
  }

  /** Whether the thread was interrupted as processDue returned (or threw). */
  boolean interruptedAfter() throws Exception {
    return interruptedAfter.get(30, TimeUnit.SECONDS);
  }
}
