package dev.idem.webhooks.internal;

import java.util.function.BiConsumer;

/** The error sink for the internal timers' tests, where no Error is expected. */
final class BackgroundErrors {
  /** Fails the test: an Error in a beat or a renewal, thrown on to whoever ran the task. */
  static final BiConsumer<Error, String> UNEXPECTED = (e, where) -> {
    throw new AssertionError("unexpected Error in " + where, e);
  };

  private BackgroundErrors() {
  }
}
