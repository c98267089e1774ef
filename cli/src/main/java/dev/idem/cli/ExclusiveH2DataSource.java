package dev.idem.cli;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;

/**
 * An app's H2 database for a command that changes its journal ({@code redrive}, {@code purge
 * --yes}), held alone as {@code JournalOptions} holds an app's SQLite file. The journal treats an
 * H2 database as used by one process only, so its open settles every operation found in flight as
 * a dead process's; beside a running app (which shares the database through H2's
 * {@code AUTO_SERVER=TRUE}, a TCP server, or one JVM) that would take back the app's claims on the
 * requests it is sending, and they could then be sent twice.
 *
 * <p>Each connection first puts the database in H2's exclusive mode ({@code SET EXCLUSIVE 1}: no
 * other connection may open, those open wait at their next statement), then counts the other
 * sessions: if there is any (the app's journal, its connection pool, a console), the connection is
 * closed, which ends the exclusive mode, and {@link OpenElsewhere} is thrown before anything is
 * written. Otherwise the database stays held until the connection closes: an app started meanwhile
 * is refused instead of running beside the command. The journal must then be opened with
 * {@code syncToDisk(false)}, since its disk sync takes a second connection, which exclusive mode
 * refuses; each connection runs {@code CHECKPOINT SYNC} as it closes instead, so that the command's
 * changes are on the disk when it ends. Exclusive mode needs a user with admin rights.
 *
 * <p>Not thread-safe beyond what the journal's open needs: one connection at a time.
 */
final class ExclusiveH2DataSource implements DataSource {
  private final JdbcDataSource h2;

  ExclusiveH2DataSource(JdbcDataSource h2) {
    this.h2 = h2;
  }

  /** Another session has the database open: the changing command must not run. */
  static final class OpenElsewhere extends SQLException {
    private static final long serialVersionUID = 1L;

    OpenElsewhere(long sessions) {
      super(sessions + " other session(s) have the H2 database open");
    }
  }

  /**
   * @throws OpenElsewhere if another session has the database open
   * @throws SQLException as H2 refuses: 90135 if another session holds it in exclusive mode, 90040
   *     if the user has no admin rights
   */
  @Override
  public Connection getConnection() throws SQLException {
    Connection c = h2.getConnection();
    try {
      try (Statement st = c.createStatement()) {
        st.execute("SET EXCLUSIVE 1");
        try (ResultSet rs = st.executeQuery(
            "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE SESSION_ID <> SESSION_ID()")) {
          rs.next();
          long others = rs.getLong(1);
          if (others > 0) {
            throw new OpenElsewhere(others);
          }
        }
      }
      return syncedOnClose(c);
    } catch (SQLException | RuntimeException e) {
      try {
        c.close();
      } catch (SQLException closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
  }

  /** {@code c}, whose {@code close()} first runs {@code CHECKPOINT SYNC} (see the class comment). */
  private static Connection syncedOnClose(Connection c) {
    return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
        (proxy, method, args) -> {
          if (method.getName().equals("close") && method.getParameterCount() == 0 && !c.isClosed()) {
            try (Statement st = c.createStatement()) {
              st.execute("CHECKPOINT SYNC");
            } finally {
              c.close();
            }
            return null;
          }
          try {
            return method.invoke(c, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException("the credentials are the H2 DataSource's");
  }

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return h2.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    h2.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    h2.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return h2.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return h2.getParentLogger();
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) {
      return iface.cast(this);
    }
    throw new SQLException("not a wrapper of " + iface.getName());
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return iface.isInstance(this);
  }
}
