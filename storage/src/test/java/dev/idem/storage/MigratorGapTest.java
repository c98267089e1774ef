package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * The version table must hold every version from 1 to its highest. A row lost from the middle (an
 * operator's DELETE, a partial restore) left the highest one in place, so the migrator, which read
 * only MAX(version), took the schema as complete: the open went on silently, whether or not that
 * migration's changes were in the database. It must refuse instead, naming the missing version,
 * and change nothing: re-running the migration out of order is not safe (the SQLite and PostgreSQL
 * scripts are not idempotent, and an older script run after a newer one may undo it).
 */
class MigratorGapTest {
  private static final Schema SCHEMA = new Schema("test store", MigratorGapTest.class,
      "dev/idem/storage/gapschema/", "gap_version", "gap_meta", Schema.Adoption.NONE);

  @TempDir
  Path tmp;

  private Connection connect() throws Exception {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + tmp.resolve("gap.db"));
    return ds.getConnection();
  }

  private static Migrator migrator() {
    return new Migrator(Dialect.SQLITE, SCHEMA, Clock.systemUTC());
  }

  @Test
  void aVersionMissingBelowTheHighestIsRefusedOnMigrateAndOnReadOnlyOpen() throws Exception {
    try (Connection c = connect()) {
      assertEquals(3, migrator().migrate(c));
      execute(c, "DELETE FROM gap_version WHERE version = 2");

      JournalException e = assertThrows(JournalException.class, () -> migrator().migrate(c));
      assertTrue(e.getMessage().contains("gap_version") && e.getMessage().contains("version 2 (V2__column.sql)")
          && e.getMessage().contains("records 1, 3"), e.getMessage());
      assertEquals(List.of(1, 3), versions(c), "a refused open changes nothing");

      JournalException readOnly = assertThrows(JournalException.class, () -> migrator().currentVersionReadOnly(c));
      assertTrue(readOnly.getMessage().contains("version 2 (V2__column.sql)"), readOnly.getMessage());
    }
  }

  @Test
  void theFirstVersionMissingIsAGapToo() throws Exception {
    try (Connection c = connect()) {
      migrator().migrate(c);
      execute(c, "DELETE FROM gap_version WHERE version = 1");

      JournalException e = assertThrows(JournalException.class, () -> migrator().migrate(c));
      assertTrue(e.getMessage().contains("version 1 (V1__table.sql)"), e.getMessage());
      assertEquals(List.of(2, 3), versions(c));
    }
  }

  @Test
  void aMissingHighestVersionIsNoGapAndRunsAgain() throws Exception {
    try (Connection c = connect()) {
      migrator().migrate(c);
      execute(c, "DROP INDEX g_v");
      execute(c, "DELETE FROM gap_version WHERE version = 3");

      assertEquals(3, migrator().migrate(c));
      assertEquals(List.of(1, 2, 3), versions(c));
    }
  }

  private static void execute(Connection c, String sql) throws Exception {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private static List<Integer> versions(Connection c) throws Exception {
    List<Integer> versions = new ArrayList<>();
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT version FROM gap_version ORDER BY version")) {
      while (rs.next()) {
        versions.add(rs.getInt(1));
      }
    }
    return versions;
  }
}
