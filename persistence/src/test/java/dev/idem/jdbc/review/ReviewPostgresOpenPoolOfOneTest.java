package dev.idem.jdbc.review;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationState;
import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PooledDataSource;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * docs/fleet.md: "every journal call takes a connection from the DataSource, commits, and gives it
 * back", and the pool need only be as large as the calls running at once. A journal used by one
 * thread (an inline-only worker, a small tool) on a pool of one connection should therefore work.
 * It does not open: {@code StoreOpener.openDataSource} keeps the connection it migrated with while
 * {@code JdbcJournal.Builder.journal} sweeps unknown states through the store, which asks the pool
 * for a second connection. HikariCP answers that, after its connectionTimeout, with
 * SQLTransientConnectionException; this pool answers at once, as HikariCP does with nothing left.
 * On a larger pool the same nesting makes open() need two connections at once, so an open that
 * runs while the app's other work holds all but one of them waits on itself until the pool's timeout.
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresOpenPoolOfOneTest {
  @Test
  void aJournalOpensAndWorksOnAPoolOfOneConnection(PgDatabase db) throws Exception {
    PooledDataSource pool = PooledDataSource.neverWaiting(db.dataSource(), 1);
    try (JdbcJournal journal = JdbcJournal.dataSource(pool).open()) {
      NewOperation op = new Ops(5).newOp("{}");
      journal.begin(op);
      assertTrue(journal.claim(op.id(), "worker", T0, Duration.ofMinutes(2)).isPresent());
      assertEquals(OperationState.IN_FLIGHT, journal.find(op.id()).orElseThrow().state());
    } finally {
      pool.close();
    }
    assertEquals(1, pool.maxInUse.get(), "connections held at once");
  }
}
