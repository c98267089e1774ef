package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link JdbcJournal#findSummariesByState}: what a listing shows of each operation, paged and
 * ordered as {@link JdbcJournal#findByState} pages, without reading requests or responses; a row
 * whose listed columns cannot be decoded is skipped and quarantined, as every read does.
 */
class OperationSummariesTest {
  @TempDir
  Path dir;

  @Test
  void summariesAgreeWithTheRecordsAndPageInIdentityOrder() throws Exception {
    Ops ops = new Ops(169);
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir)) {
      for (int i = 0; i < 5; i++) {
        OperationId id = ops.id("create-order");
        NewOperation op = new NewOperation(id, i == 0 ? "order-1" : null, Ops.op(id, "{}").fingerprint(),
            Ops.request("{}"), Ops.T0, i % 2 == 0);
        j.begin(op);
        Lease lease = j.claim(id, "app", Ops.T0, Duration.ofMinutes(1)).orElseThrow();
        j.recordAttempt(id, lease, new AttemptRecord(1, lease.generation(), Ops.T0, Ops.T0.plusMillis(5),
            Classification.PERMANENT, 402, null, "HTTP 402", Duration.ZERO, "permanent: no retry"));
        j.transition(id, lease, Transition.finish(OperationState.FAILED, Ops.T0.plusMillis(5), null, "HTTP 402"));
      }
      j.begin(ops.newOp("{}"));

      List<OperationSummary> expected = new ArrayList<>();
      for (OperationRecord r : j.findByState(OperationState.FAILED, null, 10)) {
        expected.add(new OperationSummary(r.id(), r.state(), r.appReference().orElse(null), r.attempts().size(),
            r.createdAt(), r.updatedAt(), r.outcomeUndelivered()));
      }
      List<OperationSummary> first = j.findSummariesByState(OperationState.FAILED, null, 3);
      List<OperationSummary> rest = j.findSummariesByState(OperationState.FAILED, first.get(2).id(), 3);
      List<OperationSummary> all = new ArrayList<>(first);
      all.addAll(rest);
      assertEquals(expected, all);
      assertEquals(2, rest.size(), "fewer than the limit: the last page");
      assertEquals(List.of(1, 1, 1, 1, 1), all.stream().map(OperationSummary::attemptCount).toList(),
          "each counts its one attempt");
      assertEquals(3, all.stream().filter(OperationSummary::outcomeUndelivered).count(), "the queued ones");
      assertEquals(1, j.findSummariesByState(OperationState.PENDING, null, 10).size());
      assertThrows(IllegalArgumentException.class, () -> j.findSummariesByState(OperationState.FAILED, null, 0));
    }
  }

  @Test
  void aRowWhoseAttemptsCannotBeReadIsSkippedAndQuarantinedAndOneDamagedOnlyInItsRequestIsListed()
      throws Exception {
    Ops ops = new Ops(170);
    List<OperationId> ids = new ArrayList<>();
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir)) {
      for (int i = 0; i < 3; i++) {
        NewOperation op = ops.newOp("{}");
        j.begin(op);
        ids.add(op.id());
      }
    }
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("idem-journal.db"));
        Statement st = c.createStatement()) {
      assertEquals(1, st.executeUpdate("UPDATE idem_operation SET attempts_json = 'x' WHERE op_key = '"
          + ids.get(0).key().value() + "'"));
      assertEquals(1, st.executeUpdate("UPDATE idem_operation SET request_json = 'x' WHERE op_key = '"
          + ids.get(1).key().value() + "'"));
    }
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir)) {
      List<OperationId> listed = j.findSummariesByState(OperationState.PENDING, null, 10).stream()
          .map(OperationSummary::id).toList();
      assertEquals(List.of(ids.get(1), ids.get(2)).stream()
          .sorted(Comparator.comparing((OperationId id) -> id.key().value())).toList(), listed);
      assertEquals(List.of(ids.get(0).key().value()),
          j.findQuarantined(10).stream().map(QuarantinedOperation::key).toList());
    }
  }
}
