package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqliteStoreTest extends JdbcStoreContract {
  @TempDir
  Path dir;

  @Override
  IdempotencyStore open() {
    return JdbcIdempotencyStore.sqlite(dir.resolve("idem.db"));
  }

  @Test
  void runsInWalModeAndSurvivesAReopen() throws Exception {
    long g = claimed(ID, A, "o1", T0);
    store().complete(ID, g, "o1", T0, CREATED, T0.plus(RETENTION));
    store().close();
    store = null;
    assertEquals(CREATED, store().find(ID).orElseThrow().response().orElseThrow());
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("idem.db"));
        Statement st = c.createStatement(); ResultSet rs = st.executeQuery("PRAGMA journal_mode")) {
      rs.next();
      assertEquals("wal", rs.getString(1));
    }
  }
}
