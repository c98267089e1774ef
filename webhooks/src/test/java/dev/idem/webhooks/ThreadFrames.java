package dev.idem.webhooks;

/**
 * What a thread under test is doing, read from its stack: the close() tests wait for a thread to
 * be parked in a named method (close()'s wait for the other runs, for the pool) instead of sleeping.
 */
final class ThreadFrames {
  private ThreadFrames() {}

  /**
   * Whether {@code t} is parked with a timeout (TIMED_WAITING) with {@code method} on its stack: a
   * bounded wait, such as close()'s for the runs or for the pool, has begun.
   */
  static boolean parkedIn(Thread t, String method) {
    return t.getState() == Thread.State.TIMED_WAITING && in(t, method);
  }

  /**
   * Spins until {@code t} has ended or waits (parked, with or without a timeout): a close() that
   * either returned or waits for something, whichever it does; the caller reads which.
   */
  static void awaitEndedOrWaiting(Thread t) {
    while (true) {
      Thread.State s = t.getState();
      if (s == Thread.State.TERMINATED || s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING) {
        return;
      }
      Thread.onSpinWait();
    }
  }

  /** Whether {@code method} is on {@code t}'s stack now. */
  static boolean in(Thread t, String method) {
    for (StackTraceElement frame : t.getStackTrace()) {
      if (frame.getMethodName().equals(method)) {
        return true;
      }
    }
    return false;
  }
}
