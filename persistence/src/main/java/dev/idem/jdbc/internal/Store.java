package dev.idem.jdbc.internal;

import dev.idem.core.IdempotencyException;

/**
 * Runs journal work on connections and decides when it is committed. Three implementations: a
 * write-ahead log in front of H2 ({@link LoggedStore}: an embedded journal in its own directory),
 * one connection with group commit ({@link SingleConnectionStore}: an app's H2 DataSource), and a
 * connection per call from a {@link javax.sql.DataSource} ({@link DataSourceStore}: PostgreSQL,
 * where a fleet shares the database).
 *
 * <p>Implementations are thread-safe.
 */
public interface Store extends AutoCloseable {
  /** The table the work of this store runs against; by default the SQL of {@code dialect}. */
  default OperationTable table(Dialect dialect) {
    return new OperationTable(dialect);
  }

  /**
   * Runs read-only work. Whatever it reads that a SYNC write produced is durable by the time this
   * returns, so nothing read here can vanish in a crash and be acted on (sent) meanwhile.
   *
   * @param row the one row (an {@link dev.idem.core.OperationId}) the work reads, or null if it may
   *     read any row; a store may then wait only for SYNC writes of that row
   */
  <T> T read(Object row, SqlWork<T> work) throws IdempotencyException;

  /**
   * Runs write work atomically, durable as {@code durability} says when this returns. Like
   * {@link #read}, it returns only once every SYNC write it may have read is durable.
   *
   * @param row the one row (an {@link dev.idem.core.OperationId}) the work reads and writes, or
   *     null if it may touch any row
   */
  <T> T write(Durability durability, Object row, SqlWork<T> work) throws IdempotencyException;

  /** Makes every write so far durable. */
  void flush() throws IdempotencyException;

  /** Flushes, then releases the connections. Idempotent. */
  @Override
  void close() throws IdempotencyException;
}
