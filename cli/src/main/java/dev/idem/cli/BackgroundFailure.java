package dev.idem.cli;

import java.io.PrintWriter;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;

/**
 * What the {@code idem} process does with a throwable no thread but main catches: the journal's
 * shutdown hook and the thread it closes on, its store's flusher, a database driver's threads, code a
 * JDBC URL has the database run. The JVM's own default printed a stack trace and let the command
 * go on, to status 0 if main finished its work. This prints one {@code idem: } line naming the
 * thread and the failure, as {@link IdemCli#main} does for an Error on main, and ends the process
 * with status 1 at once.
 *
 * <p>At once, without the shutdown hooks ({@link Runtime#halt}): a thread of the process died
 * halfway, which main may be waiting for without end, and in a JVM out of memory or already
 * shutting down (a failure in the journal's own shutdown hook) an orderly exit may never end or may
 * keep its earlier status. The journal is made to survive a kill: its next open recovers as after
 * a crash. Only the first failure is reported; another thread's, meanwhile, is not printed.
 *
 * <p>Thread-safe.
 */
final class BackgroundFailure implements Thread.UncaughtExceptionHandler {
  /** The exit status for a failed command, as for an Error on main. */
  static final int STATUS = 1;

  private final PrintWriter err;
  private final Runnable flushOut;
  private final IntConsumer halt;
  private final AtomicBoolean reported = new AtomicBoolean();

  /**
   * @param err where the line goes
   * @param flushOut flushes what the command printed so far, before the process ends
   * @param halt ends the process with the status given ({@link Runtime#halt} in {@link IdemCli#main})
   */
  BackgroundFailure(PrintWriter err, Runnable flushOut, IntConsumer halt) {
    this.err = err;
    this.flushOut = flushOut;
    this.halt = halt;
  }

  @Override
  public void uncaughtException(Thread thread, Throwable failure) {
    if (!reported.compareAndSet(false, true)) {
      return; // the first one's line is being printed, and the process is ending
    }
    try {
      err.println(line(thread, failure));
      err.flush();
    } catch (Throwable again) {
      // Not even the line could be made (the heap is full): the status still says it failed.
    }
    try {
      flushOut.run();
    } catch (Throwable again) {
      // What could not be written is lost with the command, whose status says it failed.
    }
    halt.accept(STATUS);
  }

  /**
   * The one line: the thread (its name is code's, but escaped as every line is), then the failure
   * named by its class, since a RuntimeException's message alone ("boom") says nothing of where it
   * came from, and an Error's advice as {@link IdemCli#jvmErrorLine} gives it.
   */
  static String line(Thread thread, Throwable failure) {
    String what = failure instanceof Error e ? IdemCli.jvmErrorLine(e).substring(IdemCli.PREFIX.length())
        : TerminalText.safe(failure.toString());
    return IdemCli.PREFIX + "on thread " + TerminalText.safe(thread.getName()) + ": " + what;
  }
}
