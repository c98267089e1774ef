package dev.idem.server.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;
import org.sqlite.SQLiteOpenMode;

/**
 * Opens a SQLite database for reading only, beside the process that writes it: SQLite's read-only
 * open mode (no byte of the files is written) and no lock of Idem's own. A database without a
 * {@code -wal} file (closed cleanly, nobody writing) is opened as immutable, so that not even a
 * {@code -shm} file appears; with one, SQLite reads it through the writer's {@code -shm} index,
 * opened read-only ({@code readonly_shm}), so not even a killed writer's index is rebuilt.
 * The same rules as the journal's read-only open. Loaded only when used, so that the PostgreSQL
 * store runs without sqlite-jdbc.
 */
public final class SqliteReadOnly {
  private SqliteReadOnly() {}

  /**
   * A read-only connection to {@code db}, which must exist.
   *
   * @param db the database file
   * @param busyTimeoutMillis how long a read waits for a writer's lock
   * @return the connection
   * @throws SQLException if SQLite cannot open it
   */
  public static Connection open(Path db, int busyTimeoutMillis) throws SQLException {
    SQLiteConfig config = new SQLiteConfig();
    config.setReadOnly(true);
    config.setOpenMode(SQLiteOpenMode.READONLY);
    config.setOpenMode(SQLiteOpenMode.OPEN_URI);
    config.setBusyTimeout(busyTimeoutMillis);
    SQLiteDataSource ds = new SQLiteDataSource(config);
    boolean immutable = !Files.exists(db.resolveSibling(db.getFileName() + "-wal"));
    // readonly_shm: with a -wal file left by a killed service, SQLite would otherwise rebuild the
    // -shm index in place, writing to the files this open promises only to read.
    ds.setUrl("jdbc:sqlite:" + db.toAbsolutePath().toUri() + (immutable ? "?immutable=1" : "?readonly_shm=1"));
    return ds.getConnection();
  }
}
