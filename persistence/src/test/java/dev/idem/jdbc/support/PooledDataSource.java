package dev.idem.jdbc.support;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The smallest connection pool that lets a measurement on PostgreSQL show the journal's cost rather
 * than a new backend per call: up to {@code size} connections, made on demand, handed back by
 * {@code close()}. Not for faults: a connection that broke goes back to the pool as it is. Apps use
 * a real pool (docs/fleet.md).
 */
public final class PooledDataSource implements DataSource, AutoCloseable {
  private final DataSource delegate;
  private final int size;
  private final BlockingQueue<Connection> idle;
  private final java.util.concurrent.Semaphore slots;
  private final boolean waits;
  /** The most connections handed out at once. */
  public final AtomicInteger maxInUse = new AtomicInteger();

  /** A pool whose callers wait for a connection while all {@code size} are in use. */
  public PooledDataSource(DataSource delegate, int size) {
    this(delegate, size, true);
  }

  private PooledDataSource(DataSource delegate, int size, boolean waits) {
    this.delegate = delegate;
    this.size = size;
    this.idle = new ArrayBlockingQueue<>(size);
    this.slots = new java.util.concurrent.Semaphore(size);
    this.waits = waits;
  }

  /**
   * A pool that never waits: with all {@code size} connections in use it refuses at once, with
   * what HikariCP throws when its connectionTimeout ends (SQLTransientConnectionException), so a
   * caller that needs a second connection while holding the last one fails rather than hangs.
   */
  public static PooledDataSource neverWaiting(DataSource delegate, int size) {
    return new PooledDataSource(delegate, size, false);
  }

  @Override
  public Connection getConnection() throws SQLException {
    if (!waits) {
      if (!slots.tryAcquire()) {
        throw new SQLTransientConnectionException("PooledDataSource - Connection is not available, request timed out"
            + " (all " + size + " in use)", "08001");
      }
    } else {
      try {
        slots.acquire();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SQLException("interrupted while waiting for a connection", e);
      }
    }
    maxInUse.accumulateAndGet(size - slots.availablePermits(), Math::max);
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

  /** Closes the connections now idle; one still handed out stays open. */
  @Override
  public void close() throws SQLException {
    for (Connection c = idle.poll(); c != null; c = idle.poll()) {
      c.close();
    }
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
