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
 * written. All its reads are one read transaction: one consistent snapshot, however long the reading
 * takes and whatever the app writes meanwhile. Thread-safe (one lock around the connection).
 */
final class ReadOnlyStore implements Store {
  private final String what;
  private final String name;
  private final Connection connection;
  private final CachedStatements session;
  private final ReentrantLock lock = new ReentrantLock();
  /** Null while open; then how it was closed. */
  private String closedHow;

  /** Set if the database was opened as immutable: each read is checked against it. */
  private final UnchangedFiles unchanged;

  /**
   * @param connection read-only, in one read transaction (auto-commit off) for the store's life:
   *     every read sees the snapshot the first one took, so that a count and a listing agree
   * @param unchanged for a database opened as immutable, its files as opened; otherwise null
   */
  ReadOnlyStore(String what, String name, Connection connection, UnchangedFiles unchanged) throws SQLException {
    this.what = what;
    this.name = name;
    this.connection = connection;
    this.unchanged = unchanged;
    connection.setAutoCommit(false);
    this.session = new CachedStatements(connection);
  }

  @Override
  public <T> T read(Object row, SqlWork<T> work) throws IdempotencyException {
    lock.lock();
    try {
      StoreErrors.checkUsable(what, name, closedHow, null);
      T result = work.run(session);
      checkUnchanged(null);
      return result;
    } catch (SQLException e) {
      checkUnchanged(e);
      throw StoreErrors.wrap(what, "read of " + name, e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Discards a read of an immutable open that the app's writes may have torn (or made SQLite call
   * the file corrupt): said as what it is, not as damage.
   */
  void checkUnchanged(SQLException failure) throws JournalException {
    String change = unchanged == null ? null : unchanged.change();
    if (change != null) {
      throw new JournalException("the " + what + " " + name + " changed while it was read (" + change + "), so what was"
          + " read may be torn and is not reported. Run the command again: it then reads the app's latest commits"
          + " through its -wal file", failure);
    }
  }

  @Override
  public <T> T write(Durability durability, Object row, SqlWork<T> work) throws IdempotencyException {
    throw new JournalException("the " + what + " " + name + " is open read-only; nothing was written", null);
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
  public void close(String how) throws IdempotencyException {
    lock.lock();
    try {
      if (closedHow != null) {
        return;
      }
      closedHow = how;
      session.close();
      connection.close();
    } catch (SQLException e) {
      throw StoreErrors.wrap(what, "close of " + name, e);
    } finally {
      lock.unlock();
    }
  }
}
