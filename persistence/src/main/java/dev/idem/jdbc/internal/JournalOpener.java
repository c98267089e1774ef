package dev.idem.jdbc.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * Opens the database of a journal: an embedded H2 journal in a directory of its own, or the
 * database of an app's DataSource (PostgreSQL, or H2). It picks the {@link Store}, migrates the
 * schema, and on any failure undoes what it did (connections, disk sync handle, the JVM-wide
 * registration of the directory), so a failed open leaves nothing held.
 *
 * <p>The journal itself is built by a {@link Finish} step that runs before the open counts as done:
 * its first reads (the sweep for unknown states) can still fail the open, and then everything is
 * released as for any other failure.
 */
public final class JournalOpener {
  /** Reader connections of a {@link LoggedStore}: enough for the cores of a small client machine. */
  private static final int LOGGED_STORE_READERS = 2;

  /** Builds the journal over an opened store. Its failure fails, and undoes, the open. */
  public interface Finish<T> {
    /**
     * @param name the journal's name for messages and logs (directory or JDBC URL)
     * @param registeredDirectory the H2 directory registered in {@link OpenJournals}, which the
     *     journal releases when it closes; null for a DataSource
     */
    T finish(String name, Dialect dialect, Store store, int schemaVersion, Path registeredDirectory)
        throws IdempotencyException;
  }

  private final boolean syncToDisk;
  private final Duration deferredCommitInterval;
  private final Clock clock;

  /**
   * @param syncToDisk H2 only: follow each group commit with a disk sync
   * @param deferredCommitInterval H2 only: the longest wait of a deferred write for its commit
   * @param clock for the schema migration records
   */
  public JournalOpener(boolean syncToDisk, Duration deferredCommitInterval, Clock clock) {
    this.syncToDisk = syncToDisk;
    this.deferredCommitInterval = deferredCommitInterval;
    this.clock = clock;
  }

  /**
   * Opens (creating if needed) the embedded H2 journal in {@code directory}, with owner-only
   * permissions ({@link H2Files}). A directory already open in this JVM is refused
   * ({@link OpenJournals}); one open in another process is refused by H2's file lock.
   */
  public <T> T openH2(Path directory, Finish<T> finish) throws IdempotencyException {
    Path dir = H2Files.prepare(directory);
    OpenJournals.acquire(dir);
    try {
      org.h2.jdbcx.JdbcDataSource ds = new org.h2.jdbcx.JdbcDataSource();
      ds.setURL(H2Files.url(dir));
      T journal = openSingleConnection(dir.toString(), ds, dir, finish);
      // After the open: H2 may have created more files of the journal (with default permissions).
      H2Files.tightenFiles(dir);
      return journal;
    } catch (IdempotencyException | RuntimeException e) {
      OpenJournals.release(dir);
      throw e;
    }
  }

  /**
   * Opens the journal in the database of an app's {@code dataSource}: PostgreSQL gets a connection
   * per call, H2 one connection for the journal's life. The DataSource itself stays the app's.
   */
  public <T> T openDataSource(DataSource dataSource, Finish<T> finish) throws IdempotencyException {
    Dialect dialect;
    String name;
    try (Connection c = dataSource.getConnection()) {
      dialect = Dialect.fromProductName(c.getMetaData().getDatabaseProductName());
      name = c.getMetaData().getURL();
      if (dialect == null) {
        throw new JournalException("unsupported database for the Idem journal: "
            + c.getMetaData().getDatabaseProductName() + " (supported: H2, PostgreSQL)", null);
      }
      if (dialect == Dialect.POSTGRESQL) {
        int version = new Migrator(dialect, clock).migrate(c);
        return finish.finish(name, dialect, new DataSourceStore(name, dataSource, dialect), version, null);
      }
    } catch (SQLException e) {
      throw JournalErrors.wrap("open", e);
    }
    return openSingleConnection(name, dataSource, null, finish);
  }

  /**
   * H2: one connection held for the journal's life for writes. In the journal's own directory a
   * {@link LoggedStore} puts a write-ahead log in front of it and reads through a second connection;
   * for an app's DataSource (whose files the journal does not own) a {@link SingleConnectionStore}
   * commits to H2 directly, with group commit and optional disk syncs.
   */
  private <T> T openSingleConnection(String name, DataSource ds, Path registered, Finish<T> finish)
      throws IdempotencyException {
    Connection main = null;
    List<Connection> readers = new ArrayList<>();
    DiskSync diskSync = null;
    Store store = null;
    try {
      main = ds.getConnection();
      if (main.getMetaData().isReadOnly()) {
        throw new JournalException("the journal " + name + " is read-only; the journal needs to write before"
            + " anything is sent", null);
      }
      int version = new Migrator(Dialect.H2, clock).migrate(main);
      if (syncToDisk) {
        // Our own directory: fdatasync the data file directly. An app's DataSource: CHECKPOINT SYNC.
        diskSync = registered != null ? DiskSync.ofFile(registered.resolve(H2Files.DATA_FILE))
            : DiskSync.ofCheckpoint(ds.getConnection());
      }
      if (registered != null) {
        for (int i = 0; i < LOGGED_STORE_READERS; i++) {
          readers.add(ds.getConnection());
        }
        store = LoggedStore.open(name, main, readers, diskSync, registered.resolve(H2Files.LOG_FILE),
            deferredCommitInterval);
      } else {
        store = new SingleConnectionStore(name, main, diskSync, deferredCommitInterval);
      }
      return finish.finish(name, Dialect.H2, store, version, registered);
    } catch (SQLException e) {
      closeQuietly(store, diskSync, main);
      readers.forEach(JournalOpener::closeQuietly);
      throw JournalErrors.wrap("open of " + name, e);
    } catch (IdempotencyException | RuntimeException e) {
      closeQuietly(store, diskSync, main);
      readers.forEach(JournalOpener::closeQuietly);
      throw e;
    } catch (IOException e) {
      closeQuietly(store, diskSync, main);
      readers.forEach(JournalOpener::closeQuietly);
      throw new JournalException("cannot open the journal files of " + name + ": " + e, e);
    }
  }

  private static void closeQuietly(AutoCloseable... all) {
    for (AutoCloseable c : all) {
      closeQuietly(c);
    }
  }

  private static void closeQuietly(AutoCloseable c) {
    if (c != null) {
      try {
        c.close();
      } catch (Exception ignored) {
        // already failing; the first error is the one to report
      }
    }
  }
}
