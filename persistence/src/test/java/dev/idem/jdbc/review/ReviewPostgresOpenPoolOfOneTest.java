package dev.idem.jdbc.review;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationState;
import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
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
    TinyPool pool = new TinyPool(db.dataSource(), 1);
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

  /** A pool of at most {@code size} connections that never waits: HikariCP with nothing left. */
  private static final class TinyPool implements DataSource {
    private final DataSource delegate;
    private final int size;
    private final List<Connection> idle = new ArrayList<>();
    private final List<Connection> all = new ArrayList<>();
    private int inUse;
    final AtomicInteger maxInUse = new AtomicInteger();

    TinyPool(DataSource delegate, int size) {
      this.delegate = delegate;
      this.size = size;
    }

    @Override
    public synchronized Connection getConnection() throws SQLException {
      if (inUse == size) {
        throw new SQLTransientConnectionException("TinyPool - Connection is not available, request timed out"
            + " (all " + size + " in use)", "08001");
      }
      Connection real = idle.isEmpty() ? delegate.getConnection() : idle.remove(idle.size() - 1);
      if (!all.contains(real)) {
        all.add(real);
      }
      inUse++;
      maxInUse.accumulateAndGet(inUse, Math::max);
      boolean[] closed = {false};
      return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
          (proxy, m, args) -> {
            if (m.getName().equals("close")) {
              synchronized (TinyPool.this) {
                if (!closed[0]) {
                  closed[0] = true;
                  if (!real.getAutoCommit()) {
                    real.rollback();
                    real.setAutoCommit(true);
                  }
                  idle.add(real);
                  inUse--;
                }
              }
              return null;
            }
            if (m.getName().equals("isClosed")) {
              return closed[0];
            }
            try {
              return m.invoke(real, args);
            } catch (InvocationTargetException e) {
              throw e.getCause();
            }
          });
    }

    synchronized void close() throws SQLException {
      for (Connection c : all) {
        c.close();
      }
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      throw new SQLException("not supported");
    }

    @Override
    public PrintWriter getLogWriter() {
      return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
    }

    @Override
    public void setLoginTimeout(int seconds) {
    }

    @Override
    public int getLoginTimeout() {
      return 0;
    }

    @Override
    public Logger getParentLogger() {
      return Logger.getGlobal();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
      return false;
    }
  }
}
