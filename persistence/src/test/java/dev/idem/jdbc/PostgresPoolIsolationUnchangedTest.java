package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.jdbc.support.WrappingDataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The journal runs its PostgreSQL transactions at READ COMMITTED ({@code SET TRANSACTION}, for
 * that transaction only; see {@code RvRpgRepeatableReadIsolationTest} for why), so a pool's
 * connections come back as the pool set them up: here as HikariCP's {@code autoCommit=false} and
 * {@code transactionIsolation=TRANSACTION_SERIALIZABLE} set them (auto-commit off, SERIALIZABLE
 * for the session). A session-wide change ({@code setTransactionIsolation}) would leak into the
 * app's own work on the same connection, and a pool that does not reset it (HikariCP resets only
 * what it saw changed through JDBC) would hand it on. The open's reads before its migration, on a
 * connection with auto-commit off, must not start the transaction that {@code SET TRANSACTION} then
 * has to begin (it fails after a query).
 */
@ExtendWith(PostgresExtension.class)
class PostgresPoolIsolationUnchangedTest {
  @Test
  void aPoolsSerializableAutoCommitOffConnectionsServeTheJournalAndComeBackUnchanged(PgDatabase db)
      throws Exception {
    List<Connection> physical = new CopyOnWriteArrayList<>();
    WrappingDataSource pool = new WrappingDataSource(db.dataSource()) {
      @Override
      protected Connection wrap(Connection c) throws SQLException {
        // A new connection each time (PGSimpleDataSource), set up as the pool's settings say.
        c.setAutoCommit(false);
        c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
        physical.add(c);
        // A pool's close: the connection stays open (for the checks below); a transaction left
        // open is rolled back, as HikariCP does for a connection with auto-commit off; no reset.
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class}, (proxy, m, args) -> {
              if (m.getName().equals("close")) {
                if (!c.getAutoCommit()) {
                  c.rollback();
                }
                return null;
              }
              return invoke(c, m, args);
            });
      }
    };
    NewOperation op = new Ops(7).newOp("{\"n\":1}");
    AtomicInteger sends = new AtomicInteger();
    try (JdbcJournal journal = JdbcJournal.dataSource(pool).open();
        IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).owner("pod-a")
            .clock(Clock.fixed(Ops.T0.plusSeconds(1), ZoneOffset.UTC)).build()) {
      journal.begin(op);
      executor.resume(op.id(), (request, key) -> {
        sends.incrementAndGet();
        return Ops.ok("{\"id\":1}");
      });
      OperationRecord r = journal.find(op.id()).orElseThrow();
      assertEquals(OperationState.SUCCEEDED, r.state());
    }
    assertEquals(1, sends.get());
    assertFalse(physical.isEmpty());
    try {
      for (Connection c : physical) {
        assertFalse(c.getAutoCommit(), "a connection's auto-commit mode changed");
        assertEquals(Connection.TRANSACTION_SERIALIZABLE, c.getTransactionIsolation(),
            "the session's isolation changed");
        try (Statement st = c.createStatement();
            ResultSet rs = st.executeQuery("SHOW default_transaction_isolation")) {
          rs.next();
          assertEquals("serializable", rs.getString(1), "the session's isolation changed");
        }
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW transaction_isolation")) {
          rs.next();
          assertEquals("serializable", rs.getString(1), "a new transaction's isolation changed");
        }
        c.rollback();
      }
    } finally {
      for (Connection c : physical) {
        c.close();
      }
    }
  }
}
