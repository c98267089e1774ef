package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A claimant whose clock runs ahead of PostgreSQL's by more than JdbcJournal.MAX_CLOCK_AHEAD takes
 * over another owner's lease only once it has run out by the database's clock; within the
 * tolerance, and for a lease the database's clock also sees expired, takeovers are as before.
 * The claims' instants are anchored to the database's clock read at the start.
 */
@ExtendWith(PostgresExtension.class)
class PostgresClockAheadTakeoverTest {
  private static final Duration LEASE = Duration.ofMinutes(2);
  private final Ops ops = new Ops(9191);

  @Test
  void aClaimantFarAheadTakesOverOnlyWhatTheDatabasesClockSeesExpired(PgDatabase db) throws Exception {
    try (JdbcJournal journal = JdbcJournal.dataSource(db.dataSource()).open()) {
      Instant now = databaseNow(db);
      NewOperation live = ops.newOp("{\"n\":1}");
      NewOperation expired = ops.newOp("{\"n\":2}");
      journal.begin(live);
      journal.begin(expired);
      assertTrue(journal.claim(live.id(), "holder", now, LEASE).isPresent());
      // Claimed by a holder 3 minutes behind: its lease ran out a minute ago by the database's clock.
      assertTrue(journal.claim(expired.id(), "holder", now.minus(Duration.ofMinutes(3)), LEASE).isPresent());

      Instant ahead = now.plus(LEASE).plusSeconds(1);
      assertTrue(journal.claim(live.id(), "fast", ahead, LEASE).isEmpty(), "a live lease is kept");
      assertEquals("holder", journal.find(live.id()).orElseThrow().owner());

      Lease takeover = journal.claim(expired.id(), "fast", ahead, LEASE).orElseThrow();
      assertTrue(takeover.takeover());
      assertEquals(2, takeover.generation());
      assertEquals(OperationState.IN_FLIGHT, journal.find(expired.id()).orElseThrow().state());
    }
  }

  @Test
  void withinTheToleranceATakeoverIsAsBefore(PgDatabase db) throws Exception {
    try (JdbcJournal journal = JdbcJournal.dataSource(db.dataSource()).open()) {
      Instant now = databaseNow(db);
      NewOperation op = ops.newOp("{}");
      journal.begin(op);
      // The holder's lease, written 2 minutes ago by its clock: it runs out at the database's now.
      assertTrue(journal.claim(op.id(), "holder", now.minus(LEASE), LEASE).isPresent());
      Lease takeover = journal.claim(op.id(), "other", now.plusSeconds(1), LEASE).orElseThrow();
      assertTrue(takeover.takeover());
    }
  }

  private static Instant databaseNow(PgDatabase db) throws Exception {
    try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT clock_timestamp()")) {
      rs.next();
      return rs.getObject(1, OffsetDateTime.class).toInstant();
    }
  }
}
