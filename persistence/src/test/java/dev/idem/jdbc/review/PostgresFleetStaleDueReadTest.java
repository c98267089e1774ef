package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Regression test for a defect found by review, described as it was; fixed: a delivery of a record that changed since it was read, and is not due, ends PENDING.
 *
 * <p>Review (outbox fleet, PostgreSQL): two instances, each with its own JdbcJournal on one database
 * and its own OutboxDispatcher. Both polls read the same due page (the page's FOR UPDATE SKIP LOCKED
 * lasts only as long as the read). Pod B claims the operation first, sends it, is answered 503 with
 * Retry-After: 5, and journals it PENDING, due in 5 s. Pod A then starts its delivery from its stale
 * page: resumeAsync reads the row again (PENDING, due in 5 s) and JdbcJournal.claim takes any
 * PENDING row whatever its next_attempt_at (the claim's fence is the state and generation it just
 * re-read, not the ones the due page held), so pod A sends at once, ignoring the server's
 * Retry-After. With real timing (two dispatchers, 300 operations, first answer 503 Retry-After: 2)
 * about 10% of the operations were sent again 20 to 120 ms after the 503.
 *
 * <p>Deterministic: pod B's delivery runs between pod A's due read and pod A's claim, through a
 * journal view pod A reads through; virtual time drives both executors.
 */
@ExtendWith(PostgresExtension.class)
class PostgresFleetStaleDueReadTest {
  private final VirtualTime time = new VirtualTime();

  @Test
  void anInstanceDoesNotSendWhatAnotherQueuedAgainBetweenItsDueReadAndItsClaim(PgDatabase db) throws Exception {
    List<Instant> sends = new CopyOnWriteArrayList<>();
    AsyncTransport server = (request, key) -> {
      sends.add(time.now());
      ResponseSnapshot r = sends.size() == 1
          ? new ResponseSnapshot(503, Map.of("Retry-After", List.of("5")), new byte[0])
          : Ops.ok("{}");
      return CompletableFuture.completedFuture(r);
    };
    try (JdbcJournal journalA = JdbcJournal.dataSource(db.dataSource()).open();
        JdbcJournal journalB = JdbcJournal.dataSource(db.dataSource()).open();
        IdempotentExecutor podB = executor(journalB, "pod-b")) {
      AtomicBoolean raced = new AtomicBoolean();
      Journal podAsView = new ForwardingJournal(journalA) {
        @Override
        public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
          int limit) throws IdempotencyException {
          List<OperationRecord> page = super.findDue(now, owner, names, after, limit);
          if (!page.isEmpty() && raced.compareAndSet(false, true)) {
            podB.resumeAsync(page.get(0).id(), server);  // pod B's dispatcher, which read the page too
            journalB.flush();  // its PENDING write committed (deferred by at most 100 ms)
          }
          return page;
        }
      };
      try (IdempotentExecutor podA = executor(podAsView, "pod-a")) {
        Operation op = Operation.builder("create-order", Ops.request("{\"n\":1}")).build();
        podA.enqueue(op);
        Instant t0 = time.now();
        try (OutboxDispatcher outboxA = OutboxDispatcher.builder(podA).clock(time.clock())
            .scheduler(time.scheduler()).registerAsync("create-order", server).build().start()) {
          time.advance(Duration.ZERO);

          assertTrue(raced.get(), "pod B delivered between pod A's due read and its claim");
          assertEquals(1, sends.size(), "503 Retry-After: 5 at " + t0 + ", and the journal holds the operation"
              + " PENDING until " + t0.plusSeconds(5) + "; yet it was sent at " + sends + " (now "
              + journalA.find(op.id()).orElseThrow().state() + ")");
          time.advance(Duration.ofSeconds(30));
          assertEquals(OperationState.SUCCEEDED, journalA.find(op.id()).orElseThrow().state());
        }
      }
    }
  }

  private IdempotentExecutor executor(Journal journal, String owner) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
  }
}
