package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.core.OperationState;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * A journal on an app's SQLite DataSource treats every IN_FLIGHT row it finds at open as a dead
 * process's (CrashRecovery), so a second journal (a second process, or a second instance in the
 * same JVM) opened on the same file while the first is alive took the live owner's operation away:
 * back to PENDING, due now, to be resent while its first attempt ran, and the live owner's outcome
 * then refused as stale. The second open is refused instead, as the embedded journal's is, by a
 * lock file beside the database, released when the first journal closes.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class SqliteDataSourceSharedTest {
  @TempDir
  Path tmp;

  @Test
  void aSecondJournalOnTheSameFileIsRefusedWhileTheFirstIsOpen() throws Exception {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + tmp.resolve("app.db"));
    Ops ops = new Ops(7);
    NewOperation op = ops.newOp("{\"amount\":100}");
    try (JdbcJournal first = JdbcJournal.dataSource(ds).open()) {
      BeginResult begun = first.beginAndClaim(op, "node-1", Duration.ofMinutes(5));
      assertEquals(OperationState.IN_FLIGHT, begun.record().state());
      // The first journal is alive, its attempt on the wire. A second journal opens the same file.
      JournalException refused = assertThrows(JournalException.class, () -> JdbcJournal.dataSource(ds).open().close(),
          "a second open would take the live owner's IN_FLIGHT operation back to PENDING (due now, to be resent)");
      assertTrue(refused.getMessage().contains(tmp.toRealPath().resolve("app.db").toString()), refused.getMessage());
      assertEquals(OperationState.IN_FLIGHT, first.find(op.id()).orElseThrow().state());
    }
    // Closed, the file is free again: the next open recovers the claim as a dead process's.
    try (JdbcJournal reopened = JdbcJournal.dataSource(ds).open()) {
      assertEquals(OperationState.PENDING, reopened.find(op.id()).orElseThrow().state());
    }
  }
}
