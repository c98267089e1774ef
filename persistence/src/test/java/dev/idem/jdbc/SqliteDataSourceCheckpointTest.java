package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * On an app's SQLite DataSource the journal's one connection keeps the transaction of a read open
 * until its next commit, which an idle journal (a resume polling findDue, a gauge calling count)
 * never makes. That open read pins a WAL snapshot: the app's own checkpoints can no longer restart
 * the -wal file of the database they share, which then grows with every write the app makes.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class SqliteDataSourceCheckpointTest {
  @TempDir
  Path tmp;

  @Test
  void anIdleJournalThatOnlyReadsDoesNotPinTheAppsWal() throws Exception {
    Path db = tmp.resolve("app.db");
    SQLiteConfig config = new SQLiteConfig();
    config.setJournalMode(SQLiteConfig.JournalMode.WAL);
    config.setBusyTimeout(200);
    SQLiteDataSource ds = new SQLiteDataSource(config);
    ds.setUrl("jdbc:sqlite:" + db);
    Ops ops = new Ops(5);
    NewOperation op = ops.newOp("{}");
    try (Connection app = ds.getConnection()) {
      try (Statement st = app.createStatement()) {
        st.execute("CREATE TABLE app_event (id INTEGER PRIMARY KEY, payload BLOB)");
      }
      try (JdbcJournal journal = JdbcJournal.dataSource(ds).deferredCommitInterval(Duration.ofMillis(10)).open()) {
        journal.begin(op);
        // The journal now only reads, as an idle resume or a metrics gauge does.
        assertEquals(1, journal.count(dev.idem.core.OperationState.PENDING));

        try (PreparedStatement insert = app.prepareStatement("INSERT INTO app_event (payload) VALUES (?)")) {
          for (int i = 0; i < 200; i++) {
            insert.setBytes(1, new byte[4096]);
            insert.executeUpdate();
          }
        }
        int busy;
        try (Statement st = app.createStatement(); ResultSet rs = st.executeQuery("PRAGMA wal_checkpoint(TRUNCATE)")) {
          rs.next();
          busy = rs.getInt(1);
        }
        long wal = Files.size(tmp.resolve("app.db-wal"));
        assertTrue(busy == 0 && wal == 0, "the app's checkpoint could not restart the -wal file (busy=" + busy
            + ", " + wal + " bytes left): the idle journal's connection holds a read transaction open");
      }
    }
  }
}
