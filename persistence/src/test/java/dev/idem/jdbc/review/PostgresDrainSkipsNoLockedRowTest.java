package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Regression test for a defect found by review, described as it was; fixed: the drain check reads by state again, without locks.
 *
 * <p>Review of bc1b2353 ("... the drain check"), PostgreSQL.
 *
 * <p>The drain check of {@code OutboxDispatcher.shutdown(timeout)} ({@code hasQueued}) now reads
 * {@code Journal.findDue(END_OF_QUEUE, owner, names, ...)} instead of {@code findByState}. On
 * PostgreSQL every due read ends in {@code FOR UPDATE SKIP LOCKED} (so that instances polling
 * together do not wait on each other): a row another transaction has locked at that moment is
 * simply not in the answer. Such a lock is what any other reader of due pages holds for the length
 * of its read (another instance's poll, another service's {@code resumePending} page, which reads
 * every name), or a claim or update in progress. The drain check takes "no row" for "nothing
 * queued" and stops with {@code true}. {@code findByState}, which it replaced, reads without a lock
 * and saw the row.
 *
 * <p>User-visible consequence: {@code shutdown(timeout)} completes with true ("the queue drained")
 * while an operation of its names is still PENDING and due, merely because another process was
 * reading it at the instant of the check; the app, told the queue is empty, closes the executor and
 * the journal and exits, and the operation waits, undelivered, for the next start of a dispatcher
 * of that name (with no other instance of the service: until the next deploy).
 */
@ExtendWith(PostgresExtension.class)
class PostgresDrainSkipsNoLockedRowTest {
  private final VirtualTime time = new VirtualTime();

  @Test
  void aDrainDoesNotReportDrainedWhileAnOperationOfItsNamesIsPendingButLockedByAnotherReader(PgDatabase db)
      throws Exception {
    AtomicInteger sends = new AtomicInteger();
    AsyncTransport server = (request, key) -> {
      sends.incrementAndGet();
      return CompletableFuture.completedFuture(Ops.ok("{}"));
    };
    try (JdbcJournal journal = JdbcJournal.dataSource(db.dataSource()).open();
        IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).owner("pod-a").clock(time.clock())
            .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
            .build()) {
      Operation op = Operation.builder("create-order", Ops.request("{\"n\":1}")).build();
      idem.enqueue(op);
      try (Connection other = db.dataSource().getConnection()) {
        // Another process's due-page read (FOR UPDATE SKIP LOCKED) holds the row for its read.
        other.setAutoCommit(false);
        try (Statement st = other.createStatement();
            ResultSet rs = st.executeQuery("SELECT op_key FROM idem_operation WHERE operation = 'create-order'"
                + " FOR UPDATE")) {
          assertTrue(rs.next());
        }
        boolean reportedDrained;
        OperationState state;
        try (OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock())
            .scheduler(time.scheduler()).registerAsync("create-order", server).build().start()) {
          CompletableFuture<Boolean> drained = outbox.shutdown(Duration.ofMinutes(5));
          time.advance(Duration.ofSeconds(1));
          reportedDrained = drained.isDone() && drained.join();
          state = journal.find(op.id()).orElseThrow().state();
        } finally {
          other.rollback();
        }
        assertFalse(reportedDrained && state == OperationState.PENDING, "shutdown(5 min) completed with true"
            + " (drained) after 1 s while the create-order operation is still " + state + " and unsent (" + sends.get()
            + " sends): its drain check reads with FOR UPDATE SKIP LOCKED and took a row another process was"
            + " reading for an empty queue");
      }
    }
  }
}
