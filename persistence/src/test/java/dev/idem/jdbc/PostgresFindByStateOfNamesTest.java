package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code JdbcJournal.findByState(state, names, after, limit)} on PostgreSQL, what the drain check
 * of an outbox dispatcher's {@code shutdown(timeout)} reads: unlike the due read with names, whose
 * {@code SKIP LOCKED} leaves out a row another transaction holds, it takes no lock and sees that
 * row (a drain that did not ended "drained" with it queued); and a name PostgreSQL cannot be asked
 * about (a NUL) matches nothing instead of failing the read.
 */
@ExtendWith(PostgresExtension.class)
class PostgresFindByStateOfNamesTest {
  @Test
  void itSeesARowAnotherTransactionHoldsLockedAndANameWithANulMatchesNothing(PgDatabase db) throws Exception {
    try (JdbcJournal journal = JdbcJournal.dataSource(db.dataSource()).open()) {
      OperationId order = new OperationId("default", "create-order", IdempotencyKey.of("k-1"));
      journal.begin(Ops.op(order, "{}"));
      journal.begin(Ops.op(new OperationId("default", "a-refund", IdempotencyKey.of("k-1")), "{}"));
      try (Connection other = db.dataSource().getConnection()) {
        other.setAutoCommit(false);
        try (Statement st = other.createStatement();
            ResultSet rs = st.executeQuery("SELECT op_key FROM idem_operation WHERE operation = 'create-order'"
                + " FOR UPDATE")) {
          assertTrue(rs.next());
        }
        try {
          List<OperationId> read = ids(journal.findByState(OperationState.PENDING,
              Set.of("create-order", "legacy\u0000refund"), null, 10));

          assertEquals(List.of(order), read, "the PENDING create-order, locked by another transaction, read without"
              + " a lock; the name with a NUL left out of the query");
          assertEquals(List.of(), journal.findByState(OperationState.PENDING, Set.of("legacy\u0000refund"), null, 10));
          assertEquals(List.of(), journal.findByState(OperationState.IN_FLIGHT, Set.of("create-order"), null, 10));
        } finally {
          other.rollback();
        }
      }
    }
  }

  private static List<OperationId> ids(List<OperationRecord> page) {
    return page.stream().map(OperationRecord::id).toList();
  }
}
