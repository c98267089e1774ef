package dev.idem.jdbc.support;

import java.util.ArrayList;
import java.util.List;

/**
 * The child processes a test started, ended (with what they started) when it closes: a test that
 * starts several children one after another and asserts in between ends them all however it fails,
 * in one try-with-resources. A child the test ended itself (say with SIGTERM, to see it stop
 * gracefully) is left as it is. Not thread-safe: for the test's own thread.
 */
public final class ChildProcesses implements AutoCloseable {
  private final List<Process> started = new ArrayList<>();

  /** Remembers {@code child}, to be ended at {@link #close()}; returns it. */
  public Process add(Process child) {
    started.add(child);
    return child;
  }

  /** Ends every child still running, and what it started (see {@link ChildJvm#destroy(Process)}). */
  @Override
  public void close() {
    started.forEach(ChildJvm::destroy);
  }
}
