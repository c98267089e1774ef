package dev.idem.storage;

import dev.idem.core.IdempotencyException;

/**
 * Runs journal work on connections and decides when it is committed. Three implementations: one
 * connection with group commit ({@link SingleConnectionStore}: the embedded SQLite journal, or an
 * app's SQLite or H2 DataSource), a connection per call from a {@link javax.sql.DataSource}
 * ({@link DataSourceStore}: PostgreSQL, where a fleet shares the database), and a read-only
 * connection for inspection tools ({@link ReadOnlyStore}).
 *
 * <p>Implementations are thread-safe.
 */
public interface Store extends AutoCloseable {
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

  /**
   * Runs write work atomically, as durable as {@code durability} says of its result. For work whose
   * durability depends on what it found (a claim: the first claim of an operation rides on begin's
   * durable record, later ones must be durable before their attempt is sent). A store that cannot
   * decide after the work runs makes it durable.
   */
  default <T> T writeDeciding(Object row, SqlWork<T> work, java.util.function.Function<? super T, Durability> durability)
      throws IdempotencyException {
    return write(Durability.SYNC, row, work);
  }

  /**
   * True if a failed write left the store unusable: writes that callers saw may be lost, so a
   * close is not clean (the next open recovers as after a crash).
   */
  default boolean broken() {
    return false;
  }

  /** True if every write is refused (a journal opened for inspection only). */
  default boolean readOnly() {
    return false;
  }

  /** Makes every write so far durable. */
  void flush() throws IdempotencyException;

  /** How a store closed by {@link #close()} says it was closed: nothing more than "closed". */
  String CLOSED = "";

  /** Flushes, then releases the connections. Idempotent. */
  @Override
  default void close() throws IdempotencyException {
    close(CLOSED);
  }

  /**
   * {@link #close()}, with the words later calls get after "is closed", such as "by its JVM
   * shutdown hook (the JVM is exiting)".
   *
   * @param how how it was closed, or {@link #CLOSED}
   */
  void close(String how) throws IdempotencyException;
}
