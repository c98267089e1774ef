package dev.idem.bench;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * What a {@link GroupCommitFloor} writes for one row, on its writer thread: the table it creates and
 * the statements it runs. Not thread-safe; one per floor, used by its writer only.
 */
interface FloorTable extends AutoCloseable {
  /** Creates the table (and its indexes) and prepares the statements on {@code connection}. */
  void open(Connection connection) throws SQLException;

  /**
   * Writes one row: the begin ({@code state} PENDING) or the outcome (any other state) of
   * {@code key}.
   *
   * @param now the batch's time, epoch milliseconds
   */
  void write(String key, String text, String state, long now) throws SQLException;

  @Override
  void close() throws SQLException;
}
