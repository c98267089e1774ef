package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationRecord;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Review (round2pg), 5d4018fd: the commit keeps claimAll skipping a locked row at once ("the
 * dispatcher's and resumePending's batch path"), and docs/fleet.md now says "the dispatchers' and
 * resumes' claims skip a row another instance has locked, so instances never wait on each other".
 * But a row claimAll skipped is not left: PendingResumer hands it to its lane with no lease
 * ({@code Job(record, ticket, null)}), the lane's AttemptLoop claims it again by name, and that
 * named claim now waits up to 1.5 s for the other instance's lock. (The OutboxDispatcher never
 * uses claimAll at all: each delivery is a resumeAsync, a named claim, which waits the same way.)
 *
 * <p>Worse, with the default resumeConcurrency of 1 a pass claims every row by name (no claimAll),
 * so a resume pass waits on each row another instance has locked. Here another instance locks the
 * row between this pass's due read and its claim, and keeps it (a claim or update of its own in
 * progress, or a stalled transaction); the pass's claim sits out the whole lock_timeout.
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresResumePassWaitsOnLockedRowTest {
  @Test
  void aResumePassDoesNotWaitOnARowAnotherInstanceHasLocked(PgDatabase db) throws Exception {
    PGSimpleDataSource ds = db.dataSource();
    NewOperation op = new Ops(41).newOp("{\"n\":1}");
    AtomicLong longestNamedClaimNanos = new AtomicLong();
    AtomicInteger duePages = new AtomicInteger();
    AtomicInteger sends = new AtomicInteger();
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).open();
        Connection otherInstance = ds.getConnection()) {
      journal.begin(op); // PENDING, due
      otherInstance.setAutoCommit(false);
      ForwardingJournal observed = new ForwardingJournal(journal) {
        @Override
        public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
            throws IdempotencyException {
          List<OperationRecord> page = super.findDue(now, owner, after, limit);
          if (duePages.getAndIncrement() == 0) {
            try (PreparedStatement ps = otherInstance.prepareStatement(
                "SELECT 1 FROM idem_operation WHERE op_key = ? FOR UPDATE")) {
              ps.setString(1, op.id().key().value());
              ps.executeQuery().close(); // the other instance takes the row once this pass has read its page
            } catch (SQLException e) {
              throw new IllegalStateException(e);
            }
          }
          return page;
        }

        @Override
        public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
            throws IdempotencyException {
          long start = System.nanoTime();
          try {
            return super.claim(id, owner, now, leaseFor);
          } finally {
            longestNamedClaimNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
          }
        }
      };
      try (IdempotentExecutor executor = IdempotentExecutor.builder().journal(observed).owner("pod-b")
          .clock(Clock.fixed(Ops.T0.plusSeconds(1), ZoneOffset.UTC)).build()) {
        executor.resumePending(Map.of(op.id().operation(), ResumeHandler.of((request, key) -> {
          sends.incrementAndGet();
          return Ops.ok("{\"id\":1}");
        }, o -> { }, f -> { })));
      } finally {
        otherInstance.rollback();
      }
      assertTrue(duePages.get() > 0, "the pass read its due page");
      assertEquals(0, sends.get());
      assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state());
      Duration waited = Duration.ofNanos(longestNamedClaimNanos.get());
      assertTrue(waited.compareTo(Duration.ofMillis(1500)) < 0, "the resume pass claimed a row another instance had"
          + " locked by name and waited " + waited.toMillis() + " ms for the other"
          + " instance's lock (docs: 'the dispatchers' and resumes' claims skip a row another instance has locked')");
    }
  }
}
