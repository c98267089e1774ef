package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.server.support.AppDb;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TransactionalSqliteTest extends TransactionalContract {
  @TempDir
  Path dir;

  @Override
  AppDb open() {
    return AppDb.sqlite(dir.resolve("app.db"));
  }

  /**
   * The embedded store syncs its -wal file outside its lock while nobody else writes the file; the
   * first transactional run switches it to SQLite's FULL commit (and records that in the file)
   * before the app's connection claims, so that no frame of the app's follows an unsynced one of
   * the store's. Failed before the switch existed: nothing was recorded (the store was FULL from
   * the start, and slower for it).
   */
  @Test
  void theFirstTransactionalRunSwitchesTheStoreToFullBeforeTheAppsConnectionWrites() throws Exception {
    start(b -> {});
    assertNull(sharedRecord(), "opened alone in its file");
    guard.inTransaction(db.dataSource(), order("k1", "A1"), ordering(201));
    assertEquals("transactional mode: the app's connections write the same database", sharedRecord());
    assertEquals(1, db.orders(op("k1")));
  }

  private String sharedRecord() throws Exception {
    try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT value FROM idem_server_meta WHERE name = 'foreign_writers'")) {
      return rs.next() ? rs.getString(1) : null;
    }
  }
}
