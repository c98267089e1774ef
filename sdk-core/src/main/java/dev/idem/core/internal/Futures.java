package dev.idem.core.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** The few things the drivers and the outbox do with futures that the JDK has no one call for. Stateless. */
public final class Futures {
  private Futures() {}

  /** The failure itself, without the {@link CompletionException} and {@link ExecutionException} around it. */
  public static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** Completes {@code target} as {@code source} completes, with its value or its exception. */
  public static <T> void completeFrom(CompletableFuture<T> target, CompletableFuture<? extends T> source) {
    source.whenComplete((value, error) -> {
      if (error != null) {
        target.completeExceptionally(error);
      } else {
        target.complete(value);
      }
    });
  }

  /**
   * Makes {@code caller} the app's view of {@code execution}: it completes as {@code execution}
   * does, and any other completion of it (a cancel, {@code orTimeout}, {@code completeOnTimeout},
   * {@code complete} or {@code completeExceptionally} by the app) cancels {@code execution}, on the
   * completing thread. Told apart by {@code execution} not being done yet: a completion relayed
   * from it runs only after it is done.
   */
  public static <T> void relayStoppingOnEarlyEnd(CompletableFuture<T> caller,
      CompletableFuture<? extends T> execution) {
    completeFrom(caller, execution);
    caller.whenComplete((value, error) -> {
      if (!execution.isDone()) {
        execution.cancel(false); // completed by the app, not from execution: the caller stopped waiting
      }
    });
  }
}
