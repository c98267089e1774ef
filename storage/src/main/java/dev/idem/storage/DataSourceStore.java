package dev.idem.storage;

import dev.idem.core.IdempotencyException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * A {@link Store} that takes a connection from a {@link DataSource} for every unit of work and
 * commits it at once: for a database shared by a fleet (PostgreSQL), where a claim must be visible
 * to other processes the moment it returns. Give it a pooled DataSource in production.
 *
 * <p>On PostgreSQL, SYNC work runs with {@code synchronous_commit = on} (the commit returns after
 * the WAL is flushed) and DEFERRED work with {@code synchronous_commit = off} (visible to everyone
 * at once, flushed by the WAL writer shortly after). Both are set per transaction
 * ({@code SET LOCAL}), so a pooled connection keeps its own settings.
 *
 * <p>On PostgreSQL every unit of work, read or write, runs at READ COMMITTED whatever the
 * connection's default (a database's or role's {@code default_transaction_isolation}, a pool's
 * {@code transactionIsolation}): set for that transaction only ({@code SET TRANSACTION}, in the
 * same round trip as the durability setting of a write), so the pooled connection keeps its own.
 * The claims rely on it ({@link Dialect#transactionStartSql} says why).
 */
public final class DataSourceStore implements Store {
  private final String what;
  private final String name;
  private final DataSource dataSource;
  private final Dialect dialect;
  /** Null while open; then how it was closed (see {@link Store#close(String)}). */
  private volatile String closedHow;

  public DataSourceStore(String what, String name, DataSource dataSource, Dialect dialect) {
    this.what = what;
    this.name = name;
    this.dataSource = dataSource;
    this.dialect = dialect;
  }

  @Override
  public <T> T read(Object row, SqlWork<T> work) throws IdempotencyException {
    return write(null, row, work);
  }

  /** Runs {@code work} in a transaction of its own; a null {@code durability} is a read. */
  @Override
  public <T> T write(Durability durability, Object row, SqlWork<T> work) throws IdempotencyException {
    StoreErrors.checkUsable(what, name, closedHow, null);
    Connection connection;
    try {
      connection = dataSource.getConnection();
    } catch (SQLException e) {
      throw StoreErrors.wrap(what, "connection to " + name, e);
    }
    try (Connection c = connection) {
      return inTransaction(c, dialect.transactionStartSql(durability), work);
    } catch (UnconfirmedCommit e) {
      if (durability == null && e.failure instanceof SQLException s) {
        throw StoreErrors.wrap(what, "read on " + name, s); // a read's commit changes nothing
      }
      throw StoreErrors.wrapCommit(what, (durability == null ? "read" : "write") + " on " + name, e.failure);
    } catch (SQLException e) {
      throw StoreErrors.wrap(what, (durability == null ? "read" : "write") + " on " + name, e);
    }
  }

  /** A failure of {@code commit()} itself, carried out of {@link #inTransaction} as a SQLException. */
  static final class UnconfirmedCommit extends SQLException {
    private static final long serialVersionUID = 1L;
    final transient Exception failure;

    UnconfirmedCommit(Exception failure) {
      super(failure.getMessage(), failure instanceof SQLException s ? s.getSQLState() : null,
          failure instanceof SQLException s ? s.getErrorCode() : 0, failure);
      this.failure = failure;
    }
  }

  /**
   * Runs {@code work} on {@code c} in one transaction: committed if it returns, rolled back if it
   * throws. Its statements are closed at its end; the connection's auto-commit mode is restored.
   *
   * @param startSql the transaction's first statement ({@link Dialect#transactionStartSql}), or
   *     null for none
   */
  static <T> T inTransaction(Connection c, String startSql, SqlWork<T> work)
      throws SQLException, IdempotencyException {
    boolean autoCommit = c.getAutoCommit();
    c.setAutoCommit(false);
    try (CachedStatements session = new CachedStatements(c)) {
      if (startSql != null) {
        try (Statement st = c.createStatement()) {
          st.execute(startSql);
        }
      }
      T result = work.run(session);
      try {
        c.commit();
      } catch (SQLException | RuntimeException e) {
        // The COMMIT may have reached the server and been carried out, its answer lost with the
        // connection (08006): the work may be durable, and no caller may be told it is not.
        throw new UnconfirmedCommit(e);
      }
      return result;
    } catch (SQLException | IdempotencyException | RuntimeException | Error e) {
      try {
        c.rollback();
      } catch (SQLException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    } finally {
      try {
        c.setAutoCommit(autoCommit);
      } catch (SQLException ignored) {
        // the connection is being closed (or returned to a pool) anyway
      }
    }
  }

  /** Every write is committed when it returns, so there is nothing to flush. */
  @Override
  public void flush() throws IdempotencyException {
    StoreErrors.checkUsable(what, name, closedHow, null);
  }

  /** Marks the store closed; the DataSource belongs to the app and stays open. */
  @Override
  public void close(String how) {
    if (closedHow == null) {
      closedHow = how;
    }
  }
}
