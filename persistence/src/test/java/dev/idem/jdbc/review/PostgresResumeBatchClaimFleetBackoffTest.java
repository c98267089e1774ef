package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Regression test for a defect found by review, described as it was; fixed: JdbcJournal.claimAll on PostgreSQL claims each operation fenced on its state and generation as read.
 *
 * <p>Review (core2) of 4ffc716d on PostgreSQL, the fleet journal: resumePending with
 * resumeConcurrency(2). Pod A's pass reads its due page; pod B (its dispatcher read the page too)
 * sends the operation, is answered 503 Retry-After: 5, and journals it PENDING, due in 5 s. Pod A's
 * batch claim is JdbcJournal.claimAll, which on PostgreSQL is the SPI's unfenced default (one
 * claim per row, taking any PENDING row): it claims the row, the lane skips the commit's "still
 * due?" check (run only for a job its batch did not claim), and pod A sends at once, ignoring the
 * server's Retry-After. The commit fixed this only for the outbox and the one-lane pass.
 */
@ExtendWith(PostgresExtension.class)
class PostgresResumeBatchClaimFleetBackoffTest {
  private final VirtualTime time = new VirtualTime();

  @Test
  void aConcurrentResumePassDoesNotSendWhatAnotherInstanceQueuedAgainAfterItsDueRead(PgDatabase db) throws Exception {
    List<Instant> sends = new CopyOnWriteArrayList<>();
    AsyncTransport server = (request, key) -> {
      sends.add(time.now());
      ResponseSnapshot r = sends.size() == 1
          ? new ResponseSnapshot(503, Map.of("Retry-After", List.of("5")), new byte[0])
          : Ops.ok("{}");
      return CompletableFuture.completedFuture(r);
    };
    Transport syncServer = (request, key) -> server.sendAsync(request, key).join();
    try (JdbcJournal journalA = JdbcJournal.dataSource(db.dataSource()).open();
        JdbcJournal journalB = JdbcJournal.dataSource(db.dataSource()).open();
        IdempotentExecutor podB = executor(journalB, "pod-b").build()) {
      AtomicBoolean raced = new AtomicBoolean();
      Journal podAsView = new ForwardingJournal(journalA) {
        @Override
        public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
            throws IdempotencyException {
          List<OperationRecord> page = super.findDue(now, owner, after, limit);
          if (!page.isEmpty() && raced.compareAndSet(false, true)) {
            podB.resumeAsync(page.get(0).id(), server);
            journalB.flush();
          }
          return page;
        }

        @Override
        public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now,
            Duration leaseFor) throws IdempotencyException {
          return delegate().claimAll(asRead, owner, now, leaseFor); // JdbcJournal's own batch claim
        }
      };
      try (IdempotentExecutor podA = executor(podAsView, "pod-a").resumeConcurrency(2).build()) {
        Operation op = Operation.builder("create-order", Ops.request("{\"n\":1}")).build();
        podA.enqueue(op);
        Instant t0 = time.now();

        podA.resumePending(Map.of("create-order", ResumeHandler.of(syncServer, o -> { }, e -> { })));

        assertTrue(raced.get(), "pod B delivered between pod A's due read and its batch claim");
        assertEquals(1, sends.size(), "503 Retry-After: 5 at " + t0 + ", and the journal held the operation PENDING"
            + " until " + t0.plusSeconds(5) + "; yet pod A's resume pass sent it at " + sends);
      }
    }
  }

  private IdempotentExecutor.Builder executor(Journal journal, String owner) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5);
  }
}
