package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationState;
import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Clock;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Review (round2pg), 5d4018fd: the claim of one named row now waits for a locked row with
 * {@code FOR UPDATE} under a LOCAL {@code lock_timeout} of 1.5 s, and
 * {@code OperationTable.selectForClaimWaiting} treats only SQLState 55P03 (lock_timeout) as "not
 * granted". An app whose connections carry a {@code statement_timeout} shorter than 1.5 s (a
 * common OLTP guard: 500 ms, 1 s; set on the role, the database, or the pool's connection options)
 * has the wait cancelled by its statement_timeout instead (SQLState 57014), which is rethrown: the
 * claim fails as a journal failure (JournalException, "a database error") where before the fix it
 * returned empty at once and the app got OperationPendingException ("call again"). The project's
 * own {@code Dialect.isLockWaitOver} already counts 57014 as a lock wait that is over.
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresNamedClaimUnderAppStatementTimeoutTest {
  @Test
  void aNamedClaimOfALockedRowUnderAShortStatementTimeoutIsPendingNotAJournalFailure(PgDatabase db)
      throws Exception {
    PGSimpleDataSource app = db.dataSource();
    app.setOptions("-c statement_timeout=1000"); // the app's own guard, shorter than the claim's 1.5 s wait
    NewOperation op = new Ops(31).newOp("{\"n\":1}");
    AtomicInteger sends = new AtomicInteger();
    try (JdbcJournal journal = JdbcJournal.dataSource(app).open();
        IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).owner("pod-b")
            .clock(Clock.fixed(Ops.T0.plusSeconds(1), ZoneOffset.UTC)).build();
        Connection otherInstance = db.dataSource().getConnection()) {
      journal.begin(op); // PENDING, nobody holds it
      otherInstance.setAutoCommit(false);
      try (PreparedStatement ps = otherInstance.prepareStatement(
          "SELECT 1 FROM idem_operation WHERE op_key = ? FOR UPDATE")) {
        ps.setString(1, op.id().key().value());
        ps.executeQuery().close(); // another instance updating the row, for longer than the claim waits
      }
      try {
        executor.resume(op.id(), (request, key) -> {
          sends.incrementAndGet();
          return Ops.ok("{\"id\":1}");
        });
        fail("the claim of a locked row returned a lease");
      } catch (OperationPendingException expected) {
        // the documented answer: not claimed now, call again
      } catch (Exception e) {
        fail("a named claim of a row locked elsewhere, under the app's statement_timeout of 1 s, failed as a journal"
            + " failure instead of OperationPendingException: " + e, e);
      } finally {
        otherInstance.rollback();
      }
      assertEquals(0, sends.get());
      assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state());
    }
  }
}
