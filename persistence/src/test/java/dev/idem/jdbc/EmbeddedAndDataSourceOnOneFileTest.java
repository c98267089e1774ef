package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.JournalException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * The embedded journal locks its directory ({@code .lock}); a journal over an app's SQLite
 * DataSource locks {@code <file>.idem-journal.lock} beside the database. The two locks are different
 * files, so a DataSource journal opened on the embedded journal's {@code idem-journal.db} (an app
 * that moved to its own DataSource, or a second component of the app pointed at the same path) is not
 * refused while the embedded journal is open, and its crash recovery takes the live journal's
 * in-flight operation for a dead process's: back to PENDING, due now, to be sent again.
 */
class EmbeddedAndDataSourceOnOneFileTest {
  @TempDir
  Path tmp;

  @Test
  void aDataSourceJournalOnAnOpenEmbeddedJournalsFileIsRefusedAndLeavesItsInFlightOperationAlone()
      throws Exception {
    Path dir = tmp.resolve("j");
    Ops ops = new Ops(3);
    NewOperation op = ops.newOp("{\"amount\":5}");
    try (JdbcJournal embedded = JdbcJournal.embedded(dir).closeOnShutdown(false).open()) {
      embedded.begin(op);
      embedded.claim(op.id(), "node", Ops.T0, Duration.ofMinutes(5)).orElseThrow();
      embedded.flush();

      SQLiteDataSource ds = new SQLiteDataSource();
      ds.setUrl("jdbc:sqlite:" + dir.resolve("idem-journal.db"));
      try (JdbcJournal second = JdbcJournal.dataSource(ds).open()) {
        OperationRecord seen = embedded.find(op.id()).orElseThrow();
        fail("a second journal opened on the live embedded journal's file; the live journal's operation, sent and"
            + " IN_FLIGHT under its lease, is now " + seen.state() + " with attempts " + seen.attempts());
      } catch (JournalException refused) {
        // expected: the file belongs to the open embedded journal
      }
      assertEquals(OperationState.IN_FLIGHT, embedded.find(op.id()).orElseThrow().state());
    }
  }

  @Test
  void anEmbeddedJournalOnAnOpenDataSourceJournalsFileIsRefusedAndLeavesItsInFlightOperationAlone()
      throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("j"));
    Ops ops = new Ops(4);
    NewOperation op = ops.newOp("{\"amount\":6}");
    try (JdbcJournal viaDataSource = JdbcJournal.dataSource(sqlite(dir)).open()) {
      viaDataSource.begin(op);
      viaDataSource.claim(op.id(), "node", Ops.T0, Duration.ofMinutes(5)).orElseThrow();
      viaDataSource.flush();

      try (JdbcJournal second = JdbcJournal.embedded(dir).closeOnShutdown(false).open()) {
        OperationRecord seen = viaDataSource.find(op.id()).orElseThrow();
        fail("an embedded journal opened on the live DataSource journal's file; the live journal's operation, sent"
            + " and IN_FLIGHT under its lease, is now " + seen.state() + " with attempts " + seen.attempts());
      } catch (JournalException refused) {
        // expected: the file belongs to the open DataSource journal
      }
      assertEquals(OperationState.IN_FLIGHT, viaDataSource.find(op.id()).orElseThrow().state());
    }
  }

  @Test
  void eitherOrderIsRefusedWithTheSameMessageAndTheFileOpensOnceTheFirstIsClosed() throws Exception {
    Path dir = tmp.resolve("j");
    String embeddedFirst;
    try (JdbcJournal embedded = JdbcJournal.embedded(dir).closeOnShutdown(false).open()) {
      embeddedFirst = assertThrows(JournalException.class, () -> JdbcJournal.dataSource(sqlite(dir)).open())
          .getMessage();
    }
    String dataSourceFirst;
    try (JdbcJournal viaDataSource = JdbcJournal.dataSource(sqlite(dir)).open()) {
      dataSourceFirst = assertThrows(JournalException.class,
          () -> JdbcJournal.embedded(dir).closeOnShutdown(false).open()).getMessage();
    }
    assertEquals(embeddedFirst, dataSourceFirst);
    assertTrue(embeddedFirst.contains("already open in this JVM")
        && embeddedFirst.contains(dir.toRealPath().resolve("idem-journal.db").toString()), embeddedFirst);
    try (JdbcJournal reopened = JdbcJournal.embedded(dir).closeOnShutdown(false).open()) {
      assertTrue(reopened.begin(new Ops(5).newOp("{}")).created(), "each close released the file");
    }
  }

  private static SQLiteDataSource sqlite(Path dir) {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + dir.resolve("idem-journal.db"));
    return ds;
  }
}
