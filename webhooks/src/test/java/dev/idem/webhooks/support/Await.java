package dev.idem.webhooks.support;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for background processing to reach a state, failing after a bound instead of sleeping a fixed time. */
public final class Await {
  private Await() {}

  public static void until(String what, Duration max, BooleanSupplier condition) throws InterruptedException {
    long end = System.nanoTime() + max.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("not reached within " + max + ": " + what);
      }
      Thread.sleep(5);
    }
  }
}
