package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A closing step of {@link SingleConnectionStore#close} that throws a RuntimeException (the
 * flusher's shutdown, a disk sync's close) used to skip the steps after it, the connection's close
 * among them: the database file stayed open in this process while its owner released the lock.
 */
class ClosingStepFailureTest {
  @TempDir
  Path dir;

  @Test
  void aDiskSyncThatThrowsOnCloseStillLetsTheConnectionClose() throws Exception {
    Connection connection = sqlite();
    IllegalStateException thrown = new IllegalStateException("the disk sync's close failed (injected)");
    SingleConnectionStore store = new SingleConnectionStore("journal", "t", connection, throwingOnClose(thrown),
        Duration.ofHours(1), false);

    Throwable failure = assertThrows(Throwable.class, store::close);

    assertSame(thrown, failure, "the closing step's failure is what close() throws");
    assertTrue(connection.isClosed(), "the connection is closed all the same");
  }

  @Test
  void theFirstFailureIsThrownAndTheConnectionsOwnRidesAlongSuppressed() throws Exception {
    Connection real = sqlite();
    SQLException closeFailed = new SQLException("the connection's close failed (injected)");
    boolean[] closeCalled = {false};
    Connection connection = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
        new Class<?>[] {Connection.class}, (proxy, method, args) -> {
          if (method.getName().equals("close")) {
            closeCalled[0] = true;
            real.close();
            throw closeFailed;
          }
          try {
            return method.invoke(real, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    IllegalStateException thrown = new IllegalStateException("the disk sync's close failed (injected)");
    SingleConnectionStore store = new SingleConnectionStore("journal", "t", connection, throwingOnClose(thrown),
        Duration.ofHours(1), false);

    Throwable failure = assertThrows(Throwable.class, store::close);

    assertTrue(closeCalled[0], "the connection's close was called");
    assertSame(thrown, failure, "the first failure is thrown");
    assertTrue(failure.getSuppressed().length == 1 && failure.getSuppressed()[0] instanceof JournalException
        && failure.getSuppressed()[0].getCause() == closeFailed,
        "the connection's close failure rides along: " + java.util.Arrays.toString(failure.getSuppressed()));
    assertArrayEquals(new Throwable[0], closeFailed.getSuppressed());
  }

  private Connection sqlite() throws SQLException {
    Connection connection = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("j.db"));
    try (Statement st = connection.createStatement()) {
      st.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)");
    }
    return connection;
  }

  private static DiskSync throwingOnClose(RuntimeException e) {
    return new DiskSync() {
      @Override
      public void sync() {
      }

      @Override
      public void close() {
        throw e;
      }
    };
  }
}
