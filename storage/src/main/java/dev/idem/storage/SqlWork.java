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
}
