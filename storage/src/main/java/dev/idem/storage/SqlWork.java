package dev.idem.storage;

import dev.idem.core.IdempotencyException;
import java.sql.SQLException;

/**
 * One unit of journal work on a connection, through its {@link SqlSession}. A store runs it
 * atomically: if it throws, none of its writes remain.
 *
 * @param <T> the result
 */
@FunctionalInterface
public interface SqlWork<T> {
  T run(SqlSession session) throws SQLException, IdempotencyException;

  /**
   * Declares {@code work} a {@link SingleStatementWork}: it writes with at most one statement and
   * throws only when that statement failed or changed nothing. A unit that breaks this promise may
   * leave a partial write behind when it throws.
   */
  static <T> SqlWork<T> singleStatement(SingleStatementWork<T> work) {
    return work;
  }
}
