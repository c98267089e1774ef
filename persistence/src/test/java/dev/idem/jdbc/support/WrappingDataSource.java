package dev.idem.jdbc.support;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The part every fault-injecting DataSource of these tests shares: hands out the delegate's
 * connections through {@link #wrap} (a proxy of the subclass's) and forwards the rest of
 * {@link DataSource} to the delegate, so each subclass holds only the fault it simulates.
 */
public abstract class WrappingDataSource implements DataSource {
  protected final DataSource delegate;

  protected WrappingDataSource(DataSource delegate) {
    this.delegate = delegate;
  }

  /** The connection handed to the code under test in place of {@code c}. */
  protected abstract Connection wrap(Connection c) throws SQLException;

  /** Runs before a connection is asked of the delegate; throws to refuse one (a database that is down). */
  protected void connecting() throws SQLException {
  }

  /** Calls {@code m} on {@code target} as a proxy does: the target's own exception, not a reflective one. */
  protected static Object invoke(Object target, Method m, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  @Override
  public final Connection getConnection() throws SQLException {
    connecting();
    return wrap(delegate.getConnection());
  }

  @Override
  public final Connection getConnection(String user, String password) throws SQLException {
    connecting();
    return wrap(delegate.getConnection(user, password));
  }

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return delegate.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    delegate.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    delegate.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return delegate.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() {
    return Logger.getLogger("dev.idem.jdbc");
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    return delegate.unwrap(iface);
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) throws SQLException {
    return delegate.isWrapperFor(iface);
  }
}
