package dev.idem.storage;

import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link Store} over one read-only connection, for inspecting a journal without taking it over
 * (the journal CLI's list, show and stats). Every write is refused before it reaches the database,
 * and SQLite's read-only open mode refuses any that got through: no byte of the journal's files is
 * written. Thread-safe (one lock around the connection).
 */
final class ReadOnlyStore implements Store {
  private final String name;
  private final Connection connection;
  private final CachedStatements session;
  private final ReentrantLock lock = new ReentrantLock();
  private boolean closed;

  ReadOnlyStore(String name, Connection connection) throws SQLException {
    this.name = name;
    this.connection = connection;
    connection.setAutoCommit(true);
    this.session = new CachedStatements(connection);
  }

  @Override
  public <T> T read(Object row, SqlWork<T> work) throws IdempotencyException {
    lock.lock();
    try {
      JournalErrors.checkUsable(name, closed, null);
      return work.run(session);
    } catch (SQLException e) {
      throw JournalErrors.wrap("read of " + name, e);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public <T> T write(Durability durability, Object row, SqlWork<T> work) throws IdempotencyException {
    throw new JournalException("the journal " + name + " is open read-only; nothing was written", null);
  }

  @Override
  public boolean readOnly() {
    return true;
  }

  @Override
  public void flush() {
    // nothing is ever written
  }

  @Override
  public void close() throws IdempotencyException {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      session.close();
      connection.close();
    } catch (SQLException e) {
      throw JournalErrors.wrap("close of " + name, e);
    } finally {
      lock.unlock();
    }
  }
}
