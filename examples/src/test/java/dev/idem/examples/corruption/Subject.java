package dev.idem.examples.corruption;

import java.nio.file.Path;
import java.util.Map;

/**
 * One of the three stores under damage: how to fill it with acknowledged records, and how to read
 * everything back through its public API as one comparable picture.
 */
interface Subject {
  /** The store's name in the table. */
  String name();

  /** The database file, relative to the store's directory. */
  String databaseFile();

  /** Writes the fixture into a new store in {@code dir}, and closes it cleanly. */
  void writeAndClose(Path dir) throws Exception;

  /** Writes the fixture into a new store in {@code dir}, then halts the JVM (kill -9): a child JVM's work. */
  void writeAndHalt(Path dir) throws Exception;

  /**
   * Opens the store as an app would, and reads every fixture record: record name to what it holds
   * (state and a digest of its stored bytes), or to {@link #SAID} if reading it failed with an
   * error that says so (a quarantine).
   *
   * @throws Exception if the store refuses to open, or a read refuses
   */
  Map<String, String> read(Path dir) throws Exception;

  /** The value of a record whose read was refused with an explanation. */
  String SAID = "refused-with-explanation";

  /** The exit code of a child JVM that halted after writing the fixture. */
  int HALT_CODE = 77;
}
