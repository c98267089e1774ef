package dev.idem.jdbc.support;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The smallest connection pool that lets a measurement on PostgreSQL show the journal's cost rather
 * than a new backend per call: up to {@code size} connections, made on demand, handed back by
 * {@code close()}. Not for faults: a connection that broke goes back to the pool as it is. Apps use
 * a real pool (docs/fleet.md).
 */
public final class PooledDataSource implements DataSource {
  private final DataSource delegate;
  private final BlockingQueue<Connection> idle;
  private final java.util.concurrent.Semaphore slots;

  public PooledDataSource(DataSource delegate, int size) {
    this.delegate = delegate;
    this.idle = new ArrayBlockingQueue<>(size);
    this.slots = new java.util.concurrent.Semaphore(size);
  }

  @Override
  public Connection getConnection() throws SQLException {
    try {
      slots.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLException("interrupted while waiting for a connection", e);
    }
    Connection real = idle.poll();
    try {
      if (real == null) {
        real = delegate.getConnection();
      }
    } catch (SQLException | RuntimeException e) {
      slots.release();
      throw e;
    }
    Connection pooled = real;
    boolean[] closed = {false};
    return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
        (proxy, method, args) -> {
          if (method.getName().equals("close")) {
            synchronized (closed) {
              if (!closed[0]) {
                closed[0] = true;
                if (!pooled.getAutoCommit()) {
                  pooled.rollback();
                  pooled.setAutoCommit(true);
                }
                idle.add(pooled);
                slots.release();
              }
            }
            return null;
          }
          if (method.getName().equals("isClosed")) {
            return closed[0];
          }
          try {
            return method.invoke(pooled, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException();
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
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException();
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
