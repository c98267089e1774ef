package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guard's SQLite file is shared with the app's own connections in transactional mode (they
 * claim in the app's transaction). The group-commit store keeps its transaction open between
 * commits; had a read left it open, the store would read a snapshot from before the app's later
 * commits, and its next write would fail on that snapshot (SQLITE_BUSY_SNAPSHOT) and break the
 * store. With {@code sharedDatabase} a read that leaves no write pending ends its transaction.
 * (With the flag off, the second count below reads 0: checked by flipping it.)
 */
class SharedDatabaseTest {
  @Test
  void readsSeeAndWritesFollowWhatAnotherConnectionCommitted(@TempDir Path dir) throws Exception {
    String url = "jdbc:sqlite:" + dir.resolve("shared.db");
    try (Connection app = DriverManager.getConnection(url); Statement appSt = app.createStatement()) {
      appSt.execute("PRAGMA journal_mode=WAL");
      appSt.execute("CREATE TABLE t (x INTEGER)");
      Connection own = DriverManager.getConnection(url);
      try (SingleConnectionStore store = new SingleConnectionStore("idempotency store", "shared", own, null, Duration.ofSeconds(60),
          true)) {
        assertEquals(0, count(store));
        appSt.execute("INSERT INTO t VALUES (1)");
        assertEquals(1, count(store), "the app's commit, not a snapshot from before it");
        appSt.execute("INSERT INTO t VALUES (2)");
        store.write(Durability.DEFERRED, null, s -> s.connection().createStatement().executeUpdate(
            "INSERT INTO t VALUES (3)"));
        store.flush();
        assertEquals(3, count(store), "the store's write followed the app's, on a fresh snapshot");
      }
    }
  }

  private static int count(Store store) throws Exception {
    return store.read(null, s -> {
      try (Statement st = s.connection().createStatement(); ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM t")) {
        rs.next();
        return rs.getInt(1);
      }
    });
  }
}
