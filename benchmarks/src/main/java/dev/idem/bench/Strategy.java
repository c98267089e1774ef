package dev.idem.bench;

import java.io.IOException;
import java.nio.file.Path;

/**
 * One row of the benchmark: a way to send the same POST. {@link #open} prepares what a run of it
 * needs (a fresh journal, so that no run inherits the records of the one before), and the returned
 * session makes calls, from any number of threads.
 */
interface Strategy {
  /** The row's label in the table. */
  String label();

  /**
   * Prepares a run.
   *
   * @param workDir an empty directory this run may use (the durable journal lives there)
   */
  Session open(Path workDir) throws Exception;

  /** A run of a strategy. {@link #call} is thread-safe; close once all calls returned. */
  interface Session extends AutoCloseable {
    /** Sends one POST and checks that it got its 201. */
    void call() throws Exception;

    /** Releases what {@link Strategy#open} made (the journal); nothing by default. */
    @Override
    default void close() throws IOException {
    }
  }
}
