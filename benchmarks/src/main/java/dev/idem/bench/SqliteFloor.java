package dev.idem.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * The floor under a durable call: one bare SQLite insert of a row like the journal's, committed on
 * its own, with the journal's settings (WAL, {@code synchronous=FULL}), on a file beside the
 * journal. Nothing Idem does can make a durable begin cheaper than this, so P2 divides by it.
 *
 * <p>Warmed once, untimed, until the WAL has been checkpointed and restarted (the journal runs in
 * that steady state; on a new file every commit also grows the WAL). Not thread-safe.
 */
final class SqliteFloor implements AutoCloseable {
  private final Connection connection;
  private final PreparedStatement insert;
  private final String request = new String(Strategies.BODY, StandardCharsets.UTF_8).repeat(4);
  private long seq;

  private SqliteFloor(Connection connection) throws SQLException {
    this.connection = connection;
    try (Statement st = connection.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS op (scope TEXT NOT NULL, operation TEXT NOT NULL, op_key TEXT NOT NULL,"
          + " request TEXT NOT NULL, state TEXT NOT NULL, updated_at INTEGER NOT NULL,"
          + " PRIMARY KEY (scope, operation, op_key))");
      st.execute("CREATE INDEX IF NOT EXISTS op_state ON op (state, updated_at)");
    }
    connection.setAutoCommit(false);
    this.insert = connection.prepareStatement("INSERT INTO op VALUES ('bench', 'create-order', ?, ?, 'PENDING', ?)"
        + " ON CONFLICT DO NOTHING");
  }

  /** Opens (creates) the floor's database at {@code file} and warms it past the first checkpoint. */
  static SqliteFloor open(Path file) throws SQLException {
    SqliteFloor floor = new SqliteFloor(connect(file));
    floor.meanMicros(1500);
    return floor;
  }

  /** A connection to {@code file} with the journal's settings: WAL, {@code synchronous=FULL}. */
  static Connection connect(Path file) throws SQLException {
    SQLiteConfig config = new SQLiteConfig();
    config.setJournalMode(SQLiteConfig.JournalMode.WAL);
    config.setSynchronous(SQLiteConfig.SynchronousMode.FULL);
    SQLiteDataSource ds = new SQLiteDataSource(config);
    ds.setUrl("jdbc:sqlite:" + file);
    return ds.getConnection();
  }

  /** The mean time, in µs, of {@code n} inserts each committed (a mean: a sync's long tail counts). */
  double meanMicros(int n) throws SQLException {
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      insert.setString(1, UUID.randomUUID().toString());
      insert.setString(2, request);
      insert.setLong(3, ++seq);
      insert.executeUpdate();
      connection.commit();
    }
    return (System.nanoTime() - start) / 1_000.0 / n;
  }

  @Override
  public void close() throws SQLException {
    insert.close();
    connection.close();
  }
}
