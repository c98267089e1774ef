package dev.idem.storage;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;

/**
 * Whether connections other than a store's own write its SQLite database: the guard's file, which
 * the app's connections share in transactional mode. A store that may be alone in its file commits
 * with {@code synchronous=NORMAL} and syncs the {@code -wal} file after the commit, outside its
 * lock; once another writer is known, it commits with {@code synchronous=FULL} for good
 * ({@link SingleConnectionStore}).
 *
 * <p>Why: between this store's commit and its sync, another connection's commit would append its
 * frames after frames that are not on the disk yet. A power loss before either sync ends could then
 * leave one of this store's frames torn under the other's intact commit, the shape {@link WalCheck}
 * refuses as damage to a committed transaction (it cannot tell which connection wrote a frame).
 * Nothing acknowledged would be lost (every sync covers the whole file, and neither commit had
 * returned), but the store would refuse to open. So the fast mode is kept only while nobody else has
 * written, and the fact that somebody has is kept in the database ({@link #META_NAME}), so that
 * later opens start with FULL.
 *
 * <p>Not thread-safe: used under the store's statement lock.
 */
final class ForeignWriters {
  /** The meta row saying another connection has written the database, and how that was found. */
  static final String META_NAME = "foreign_writers";

  private final Connection connection;
  private final String metaTable;
  private PreparedStatement dataVersion;
  private long lastVersion;

  private ForeignWriters(Connection connection, String metaTable) {
    this.connection = connection;
    this.metaTable = metaTable;
  }

  /**
   * At open, before the store's first unit: why the database is known to be shared, or null if
   * nothing says so. It is if an earlier open recorded a foreign write, or if it holds a table that
   * is not the store's own (the app's tables, which transactional mode writes in the same
   * transaction as the claim).
   */
  static String knownAtOpen(Connection c, String metaTable, List<String> ownTables) throws SQLException {
    String recorded = Meta.getIfPresent(c, metaTable, META_NAME);
    if (recorded != null) {
      return recorded;
    }
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        String table = rs.getString(1);
        if (!ownTables.contains(table.toLowerCase(Locale.ROOT))) {
          return "it holds a table that is not the store's (" + table + ")";
        }
      }
    }
    return null;
  }

  /** Starts watching {@code connection}: commits of other connections from now on are seen. */
  static ForeignWriters watch(Connection connection, String metaTable) throws SQLException {
    ForeignWriters w = new ForeignWriters(connection, metaTable);
    w.dataVersion = connection.prepareStatement("PRAGMA data_version");
    w.lastVersion = w.version();
    return w;
  }

  /**
   * True if another connection committed since the last call. SQLite's {@code data_version}
   * changes when another connection's commit becomes visible to this one, never for its own
   * commits; this connection sees it at the start of its next read, which every unit and the commit
   * round's own check start after the commit they follow.
   */
  boolean othersCommitted() throws SQLException {
    long now = version();
    boolean changed = now != lastVersion;
    lastVersion = now;
    return changed;
  }

  /**
   * Records that the database is shared, and why, in auto-commit mode. It does not wait for the
   * write lock: an app's transaction that holds it may be waiting for this store (a joined
   * transaction that wrote before the guard's claim), and the record only spares later opens
   * this watch.
   *
   * @throws SQLException if the lock was held, or the write failed
   */
  void record(String why) throws SQLException {
    try (Statement st = connection.createStatement()) {
      long busyTimeout;
      try (ResultSet rs = st.executeQuery("PRAGMA busy_timeout")) {
        rs.next();
        busyTimeout = rs.getLong(1);
      }
      st.execute("PRAGMA busy_timeout=0");
      try {
        Meta.put(connection, metaTable, META_NAME, why);
      } finally {
        st.execute("PRAGMA busy_timeout=" + busyTimeout);
      }
    }
  }

  void close() throws SQLException {
    dataVersion.close();
  }

  private long version() throws SQLException {
    try (ResultSet rs = dataVersion.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
