package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * docs/fleet.md: "leaseFor (default 2 minutes) is how long a claim keeps other instances off an
 * operation", and takeovers happen only to attempts that outlive their lease or instances paused
 * past it. But the lease is written with the claimant's clock and compared with each other
 * instance's own clock (never the database's), and fleet.md says nothing about clocks (server.md
 * does, for the server store). An instance whose clock runs 2 minutes ahead (a VM after a
 * suspend, a host whose NTP is broken) takes over every live lease the moment it is claimed, and
 * sends concurrently with the holder whose attempt is 1 second old.
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresLeaseClockSkewTest {
  private final Ops ops = new Ops(77);
  private final List<String> sends = new CopyOnWriteArrayList<>();

  @Test
  void aLiveOneSecondOldLeaseIsNotTakenOverByAnInstanceWhoseClockIsAhead(PgDatabase db) throws Exception {
    // Instance-a's clock agrees with the database's (NTP); instance-b's runs 2 min 1 s ahead of both.
    // (The journal judges a takeover against the database's clock: see JdbcJournal's
    // aheadOfTheDatabase. A fixed T0 would put both instances days behind the test database.)
    Instant databaseNow = databaseNow(db);
    VirtualTime timeA = new VirtualTime(databaseNow);
    VirtualTime timeB = new VirtualTime(databaseNow.plus(Duration.ofMinutes(2)).plusSeconds(1));
    try (JdbcJournal journalA = JdbcJournal.dataSource(db.dataSource()).open();
        JdbcJournal journalB = JdbcJournal.dataSource(db.dataSource()).open()) {
      IdempotentExecutor a = executor(journalA, "instance-a", timeA);
      IdempotentExecutor b = executor(journalB, "instance-b", timeB);
      IdempotencyKey key = ops.key();
      Operation op = Operation.builder("create-order", Ops.request("{\"amount\":100}")).key(key).build();

      Exception thrown = null;
      try {
      a.execute(op, (request, k) -> {
        sends.add("instance-a");
        // a's request is on the wire for one second; b resumes meanwhile
        timeA.advance(Duration.ofSeconds(1));
        timeB.advance(Duration.ofSeconds(1));
        b.resumePending(Map.of("create-order", ResumeHandler.of((r, k2) -> {
          sends.add("instance-b");
          return Ops.ok("{\"id\":1}");
        }, o -> { }, f -> { })));
        return Ops.ok("{\"id\":1}");
      });
      } catch (Exception e) {
        thrown = e; // instance-a's own success is refused: StaleOwnerException
      }

      assertEquals(List.of("instance-a"), sends, "instance-b took over instance-a's 1-second-old, 2-minute lease"
          + " and sent concurrently (its clock is 2 min 1 s ahead; fleet.md never mentions clocks); instance-a's call ended with " + thrown);
    }
  }

  private static Instant databaseNow(PgDatabase db) throws Exception {
    try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT clock_timestamp()")) {
      rs.next();
      return rs.getObject(1, OffsetDateTime.class).toInstant();
    }
  }

  private static IdempotentExecutor executor(JdbcJournal journal, String owner, VirtualTime time) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).leaseFor(Duration.ofMinutes(2))
        .clock(time.clock()).scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5).build();
  }
}
