package dev.idem.jdbc.support;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * Wraps a DataSource whose connection drops while a COMMIT is answered: once armed, the next
 * commit is carried out for real ({@link #commitFirst}) or not at all, and then throws what pgjdbc
 * throws when its socket breaks (SQLState 08006). After that, {@link #down} makes every new
 * connection fail, as while the database stays unreachable. Each instance has its own switches.
 */
public final class CommitReplyLost extends WrappingDataSource {
  /** Armed: the next commit fails (once). */
  public final AtomicBoolean armed = new AtomicBoolean();
  /** Whether the failing commit is carried out first (the reply is lost) or not at all. */
  public volatile boolean commitFirst = true;
  /** Set when the failing commit throws: then no connection can be had until it is reset. */
  public volatile boolean downAfterFailure;
  public volatile boolean down;

  public CommitReplyLost(DataSource delegate) {
    super(delegate);
  }

  @Override
  protected void connecting() throws SQLException {
    if (down) {
      throw new SQLException("Connection to the database refused (simulated)", "08001");
    }
  }

  @Override
  protected Connection wrap(Connection c) {
    InvocationHandler h = (proxy, m, args) -> {
      boolean failing = m.getName().equals("commit") && armed.compareAndSet(true, false);
      if (failing && !commitFirst) {
        throw lost();
      }
      Object result = invoke(c, m, args);
      if (failing) {
        throw lost();
      }
      return result;
    };
    return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
        h);
  }

  private SQLException lost() {
    if (downAfterFailure) {
      down = true;
    }
    return new SQLException("An I/O error occurred while sending to the backend.", "08006");
  }
}
