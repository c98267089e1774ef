package dev.idem.core.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** The two things the drivers and the outbox do with futures that the JDK has no one call for. Stateless. */
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
}
