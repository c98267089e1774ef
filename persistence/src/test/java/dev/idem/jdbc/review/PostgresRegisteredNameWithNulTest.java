package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Regression test for a defect found by review, described as it was; fixed: names the database cannot be asked about are left out of the query (no operation has one).
 *
 * <p>Review of 4cc7ea00 ("a poll reads the due operations of its registered names only"), PostgreSQL.
 *
 * <p>JdbcJournal refuses to let the database see caller text it cannot be asked about: every call
 * that takes an identity from its caller checks it first ({@code holdable}/{@code unaskableAt}: on
 * PostgreSQL a NUL, which the server refuses as "invalid byte sequence for encoding UTF8: 0x00", so
 * that the call answers "none" instead of failing as if the database had failed). The new
 * {@code findDue(now, owner, names, after, limit)} binds the dispatcher's registered names into
 * {@code operation IN (...)} without that check. OutboxDispatcher.Builder.register accepts any
 * non-null name, and before 4cc7ea00 the names never reached the database.
 *
 * <p>User-visible consequence: one registered name with a NUL in it (a name read from
 * configuration, say; no operation can have it, begin refuses it) makes every poll's due read fail
 * on PostgreSQL. The dispatcher takes it for a journal that cannot be read and delivers nothing of
 * any of its names, forever, while the same dispatcher on SQLite or H2, or before this commit on
 * PostgreSQL, delivers them.
 */
@ExtendWith(PostgresExtension.class)
class PostgresRegisteredNameWithNulTest {
  private final VirtualTime time = new VirtualTime();

  @Test
  void aNameNoOperationCanHaveDoesNotStopTheDeliveriesOfTheOthers(PgDatabase db) throws Exception {
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
      try (OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
          .registerAsync("create-order", server)
          .registerAsync("legacy\u0000refund", server)  // no operation can have this name
          .build().start()) {
        time.advance(Duration.ofSeconds(60));

        assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state(),
            "a create-order operation due for 60 s was not delivered (" + sends.get() + " sends): with a registered"
                + " name holding a NUL, every due read of the dispatcher fails on PostgreSQL (the name is bound"
                + " into operation IN (...) unchecked), so it delivers none of its names");
      }
    }
  }
}
