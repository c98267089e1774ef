package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.Ops;
import dev.idem.storage.EmbeddedFiles;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A row whose identity columns today's rules refuse (an Idem before keys were restricted accepted a
 * comma in a key) is set aside and skipped by every paged read, beside healthy rows of the same
 * page: {@code findDue} by identity (the outbox's), {@code findByState}, {@code findUndelivered},
 * {@code findSummariesByState}, on a journal open for writing (which quarantines it) and one open
 * read-only (which cannot, and skips it on every read). The resume's own read ({@code findDue} by
 * owner) is RvRsqliteOldKeyRowBlocksResumeTest.
 */
class OldKeyRowPagingTest {
  @TempDir
  Path tmp;

  private Path dir;
  private OperationId pending;
  private OperationId failed;

  @BeforeEach
  void journalWithTwoOldKeys() throws Exception {
    dir = tmp.resolve("journal");
    Ops ops = new Ops(11);
    OperationId oldPending = ops.id("create-order");
    pending = ops.id("create-order");
    OperationId oldFailed = ops.id("create-order");
    failed = ops.id("create-order");
    try (JdbcJournal j = JdbcJournal.embedded(dir).closeOnShutdown(false).open()) {
      j.begin(Ops.op(oldPending, "{\"n\":1}"));
      j.begin(Ops.op(pending, "{\"n\":2}"));
      for (OperationId id : List.of(oldFailed, failed)) {
        RequestSnapshot r = Ops.request("{\"n\":3}");
        j.begin(new NewOperation(id, null, Fingerprinter.defaults().fingerprint(r), r, T0, true));
        j.abandon(id, Transition.finish(OperationState.FAILED, T0.plusSeconds(1), null, "refused"));
      }
    }
    try (Connection c = DriverManager.getConnection(
            "jdbc:sqlite:" + dir.toRealPath().resolve(EmbeddedFiles.DATABASE_FILE));
        PreparedStatement ps = c.prepareStatement("UPDATE idem_operation SET op_key = ? WHERE op_key = ?")) {
      ps.setString(1, "order,42");
      ps.setString(2, oldPending.key().value());
      assertEquals(1, ps.executeUpdate());
      ps.setString(1, "order,43");
      ps.setString(2, oldFailed.key().value());
      assertEquals(1, ps.executeUpdate());
    }
  }

  @Test
  void everyPagedReadSkipsAndQuarantinesTheRowAndReturnsTheOthers() throws Exception {
    try (JdbcJournal j = JdbcJournal.embedded(dir).closeOnShutdown(false).open()) {
      assertEquals(List.of(pending), ids(j.findDue(T0.plusSeconds(60), null, 10)), "findDue");
      assertEquals(List.of(pending), ids(j.findByState(OperationState.PENDING, null, 10)), "findByState");
      assertEquals(List.of(failed), ids(j.findUndelivered(null, 10)), "findUndelivered");
      assertEquals(List.of(failed),
          j.findSummariesByState(OperationState.FAILED, null, 10).stream().map(OperationSummary::id).toList(),
          "findSummariesByState");
      assertEquals(List.of("order,42", "order,43"),
          j.findQuarantined(10).stream().map(QuarantinedOperation::key).sorted().toList(),
          "both rows are set aside, as stored");
    }
  }

  @Test
  void aReadOnlyJournalSkipsTheRowOnEveryRead() throws Exception {
    try (JdbcJournal j = JdbcJournal.openReadOnly(dir)) {
      for (int pass = 0; pass < 2; pass++) {
        assertEquals(List.of(pending), ids(j.findDue(T0.plusSeconds(60), null, 10)), "findDue");
        assertEquals(List.of(pending), ids(j.findByState(OperationState.PENDING, null, 10)), "findByState");
        assertEquals(List.of(failed), ids(j.findUndelivered(null, 10)), "findUndelivered");
      }
      assertEquals(List.of(), j.findQuarantined(10), "a read-only journal flags nothing");
    }
  }

  private static List<OperationId> ids(List<OperationRecord> records) {
    return records.stream().map(OperationRecord::id).toList();
  }
}
