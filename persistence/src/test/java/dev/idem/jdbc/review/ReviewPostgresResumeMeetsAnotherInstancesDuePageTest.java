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
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.ZoneOffset;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Review (pgfleet): on PostgreSQL every due query (findDue: each dispatcher's poll, each
 * resumePending page, on every instance) reads its page {@code FOR UPDATE SKIP LOCKED}, so each
 * row of the page is row-locked for the length of that read, though nothing is claimed by it. A
 * claim meeting such a lock returns empty at once ({@code JdbcJournal.claim}: "another process is
 * claiming or updating it right now"). An app's {@code executor.resume(id)} (or an execute of an
 * existing PENDING operation) of an operation that nobody holds, made while another instance's
 * dispatcher happens to read its page, then fails with OperationPendingException saying
 * "PENDING under owner null until null; it will be sent again with the same key when that lease
 * expires": there is no lease, nothing was claimed, and nobody may send it (the other instance
 * may register no transport for the name). The lock of a read lasts milliseconds: the claim of one
 * named row could wait for it (FOR UPDATE, a short lock_timeout) rather than read a page's read
 * lock as a holder.
 *
 * <p>The other instance's due-page read is held open here on a connection of the test's (the same
 * {@code FOR UPDATE SKIP LOCKED} the due query takes), and released as soon as a backend waits on it
 * (so a claim that waits succeeds) or when resume returns.
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresResumeMeetsAnotherInstancesDuePageTest {
  @Test
  void aResumeOfAnUnheldOperationIsNotRefusedBecauseAnotherInstanceIsReadingItsDuePage(PgDatabase db)
      throws Exception {
    PGSimpleDataSource ds = db.dataSource();
    NewOperation op = new Ops(21).newOp("{\"n\":1}");
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).open();
        IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).owner("pod-b")
            .clock(Clock.fixed(Ops.T0.plusSeconds(1), ZoneOffset.UTC)).build();
        Connection otherInstance = ds.getConnection()) {
      journal.begin(op); // PENDING, due, nobody holds it
      otherInstance.setAutoCommit(false);
      try (Statement st = otherInstance.createStatement();
          ResultSet page = st.executeQuery("SELECT op_key FROM idem_operation WHERE state = 'PENDING'"
              + " ORDER BY updated_at LIMIT 100 FOR UPDATE SKIP LOCKED")) {
        page.next(); // pod-a's dispatcher is reading its due page
      }
      AtomicBoolean resumed = new AtomicBoolean();
      CompletableFuture<Void> releaser = CompletableFuture.runAsync(() -> {
        try (Connection watch = db.dataSource().getConnection(); Statement st = watch.createStatement()) {
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
          while (!resumed.get() && System.nanoTime() < deadline) {
            try (ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                + " AND datname = current_database()")) {
              rs.next();
              if (rs.getInt(1) > 0) {
                break;
              }
            }
            Thread.onSpinWait();
          }
          otherInstance.rollback(); // the page read ends, milliseconds later in real life
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      try {
        executor.resume(op.id(), (request, key) -> Ops.ok("{\"id\":1}"));
      } catch (OperationPendingException e) {
        fail("resume of a PENDING operation nobody holds failed because another instance was reading its due page:"
            + " " + e.getMessage());
      } finally {
        resumed.set(true);
        releaser.get(30, TimeUnit.SECONDS);
      }
      assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    }
  }
}
