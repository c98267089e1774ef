package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.JournalException;
import dev.idem.core.OperationState;
import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * H2 commits each DDL statement on its own (Migrator says so), so a process killed inside a
 * migration of two statements leaves the first applied and the version unrecorded. H2's V4 is two
 * ALTER TABLE ... ADD COLUMN statements. The next open runs V4 again from its first statement,
 * which fails on the column that already exists, and it does so on every open after that: the
 * app's journal, with its pending operations, can no longer be opened by any Idem version.
 */
class H2HalfAppliedMigrationTest {
  @TempDir
  Path tmp;

  private JdbcDataSource h2() {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + tmp.resolve("j") + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    return h2;
  }

  @Test
  void aJournalKilledBetweenTheTwoStatementsOfAMigrationOpensAgainWithItsOperations() throws Exception {
    Ops ops = new Ops(7);
    NewOperation pending = ops.newOp("{\"amount\":5}");
    try (JdbcJournal j = JdbcJournal.dataSource(h2()).open()) {
      j.begin(pending);
    }
    // What a kill between V4's two statements leaves: its first column added, its second not, V4 not recorded.
    try (Connection c = h2().getConnection(); Statement st = c.createStatement()) {
      st.execute("ALTER TABLE idem_operation DROP COLUMN outcome_delivered_at");
      st.execute("DELETE FROM idem_schema_version WHERE version = 4");
    }
    try (JdbcJournal j = JdbcJournal.dataSource(h2()).open()) {
      assertEquals(4, j.schemaVersion());
      assertEquals(OperationState.PENDING, j.find(pending.id()).orElseThrow().state());
      assertTrue(j.begin(ops.newOp("{\"after\":true}")).created());
    } catch (JournalException e) {
      fail("a journal whose migration was cut between two DDL statements can never be opened again: "
          + e.getMessage() + (e.getCause() == null ? "" : " / " + e.getCause().getMessage()));
    }
  }
}
