package dev.idem.cli;

/**
 * A Java function for H2 ({@code CREATE ALIAS}) that a child CLI's database runs as its connection
 * opens: it starts a thread of its own that throws, and waits for that thread to end. The thread's
 * failure is uncaught; what the process does with it is what {@link BackgroundThreadFailureTest}
 * checks.
 */
public final class FailingThread {
  /** The failing thread's name, which the CLI's line names. */
  static final String NAME = "injected-background-worker";

  private FailingThread() {}

  /**
   * Runs a thread that throws an OutOfMemoryError ({@code kind} "error") or an
   * IllegalStateException (otherwise), and waits for it.
   *
   * @param kind "error" or "runtime"
   * @return 0, if the process is still there
   * @throws InterruptedException if interrupted while waiting
   */
  public static int fail(String kind) throws InterruptedException {
    Thread t = new Thread(() -> {
      if (kind.equals("error")) {
        throw new OutOfMemoryError("injected on a background thread");
      }
      throw new IllegalStateException("injected on a background thread");
    }, NAME);
    t.start();
    t.join();
    return 0;
  }
}
