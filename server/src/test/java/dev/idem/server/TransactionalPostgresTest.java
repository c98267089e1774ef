package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.server.support.AppDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(PostgresExtension.class)
class TransactionalPostgresTest extends TransactionalContract {
  private PgDatabase pg;

  @BeforeEach
  void database(PgDatabase pg) {
    this.pg = pg;
  }

  @Override
  AppDb open() {
    return AppDb.postgres(pg.dataSource());
  }

  /**
   * With {@code inFlightWait}, a duplicate waits on the first transaction's lock that long, then
   * gets 409 (a retry later gets the replay); the connection comes back usable and with its own
   * {@code lock_timeout}.
   */
  @Test
  void aDuplicateWhoseWaitEndsGets409AndItsConnectionIsUnharmed() throws Exception {
    start(b -> b.inFlightWait(Duration.ofMillis(200)));
    CountDownLatch inHandler = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Future<GuardResponse> first = pool.submit(() -> guard.inTransaction(db.dataSource(), order("w1", "A1"),
        (c, claim, body) -> {
          AppDb.insertOrder(c, claim.operationId(), "A1");
          inHandler.countDown();
          TransactionalContract.hold(release);
          return CapturedResponse.json(201, "{\"id\":\"first\"}");
        }));
    assertTrue(inHandler.await(20, TimeUnit.SECONDS));
    try (Connection c = db.dataSource().getConnection()) {
      GuardResponse busy = guard.inTransaction(c, order("w1", "A1"), ordering(201));
      assertEquals(409, busy.status());
      assertEquals("1", busy.header("Retry-After"));
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW lock_timeout")) {
        rs.next();
        assertEquals("0", rs.getString(1), "the session's own lock_timeout is untouched");
      }
      release.countDown();
      assertEquals(201, first.get(20, TimeUnit.SECONDS).status());
      assertEquals("true", guard.inTransaction(c, order("w1", "A1"), ordering(201))
          .header(IdempotencyGuard.REPLAYED_HEADER));
    }
    assertEquals(1, db.orders(op("w1")));
  }
}
