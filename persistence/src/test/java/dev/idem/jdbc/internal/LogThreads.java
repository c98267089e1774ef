package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/** Test helpers that watch threads inside the {@link WriteAheadLog}. */
final class LogThreads {
  private LogThreads() {
  }

  /** Waits until every thread is parked in {@link WriteAheadLog#awaitDurable} (so it has appended its record). */
  static void awaitParked(List<Thread> threads) {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    for (Thread t : threads) {
      while (t.getState() != Thread.State.WAITING || Arrays.stream(t.getStackTrace())
          .noneMatch(f -> f.getClassName().equals(WriteAheadLog.class.getName())
              && f.getMethodName().equals("awaitDurable"))) {
        assertTrue(System.nanoTime() < deadline, t.getName() + " never waited for the force");
        Thread.onSpinWait();
      }
    }
  }
}
