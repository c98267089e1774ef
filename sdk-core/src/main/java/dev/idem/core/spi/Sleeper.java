package dev.idem.core.spi;

import java.time.Duration;

/**
 * Waits between synchronous attempts. Injected so that tests can advance a fake clock instead of
 * sleeping; production code uses {@link #system()}.
 */
@FunctionalInterface
public interface Sleeper {
  /**
   * Blocks for {@code duration}.
   *
   * @param duration how long to wait, not negative
   * @throws InterruptedException if the thread is interrupted; the executor then leaves the
   *     operation PENDING
   */
  void sleep(Duration duration) throws InterruptedException;

  /**
   * Sleeps with {@link Thread#sleep(long, int)}.
   *
   * @return a stateless sleeper that blocks the calling thread
   */
  static Sleeper system() {
    return d -> Thread.sleep(d.toMillis(), (int) (d.toNanos() % 1_000_000));
  }
}
