package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15: an Error in the journal (an OutOfMemoryError while a unit runs, or while the
 * background flusher commits) used to leave the store looking usable, and in the flusher's case
 * ended unseen in the executor's future. Now it breaks the store: it reports itself broken, and
 * every later call fails fast with a JournalException that names the Error and carries it.
 */
class SingleConnectionStoreErrorTest {
  /** The Error a test injects; named in the messages that follow. */
  static final class InjectedError extends Error {
    InjectedError(String message) {
      super(message);
    }
  }

  @Test
  void errorInTheBackgroundCommitBreaksTheStoreAndLaterCallsNameIt(@TempDir Path dir) throws Exception {
    AtomicReference<Error> onCommit = new AtomicReference<>();
    try (SingleConnectionStore store = new SingleConnectionStore("journal", "t", failing(dir, onCommit), null,
        Duration.ofMillis(1), false)) {
      store.write(Durability.SYNC, null, s -> s.connection().createStatement().executeUpdate("CREATE TABLE t(x)"));
      InjectedError error = new InjectedError("out of memory in the flusher");
      onCommit.set(error);
      // A deferred write returns at once; the flusher thread commits it 1 ms later and meets the Error.
      // On a loaded machine the flusher may get there before the write returns: then the write
      // itself says the store broke (its last check), which is as right.
      try {
        store.write(Durability.DEFERRED, null,
            s -> s.connection().createStatement().executeUpdate("INSERT INTO t VALUES (1)"));
      } catch (JournalException brokenFirst) {
        assertSame(error, brokenFirst.getCause());
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (!store.broken() && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      assertTrue(store.broken(), "the store reports itself broken");
      onCommit.set(null);
      JournalException later = assertThrows(JournalException.class,
          () -> store.read(null, s -> s.connection().createStatement().executeQuery("SELECT 1").next()));
      assertSame(error, later.getCause());
      assertTrue(later.getMessage().contains("InjectedError"), later.getMessage());
    }
  }

  @Test
  void errorInACallersCommitReachesThatCallerAndBreaksTheStore(@TempDir Path dir) throws Exception {
    AtomicReference<Error> onCommit = new AtomicReference<>();
    try (SingleConnectionStore store = new SingleConnectionStore("journal", "t", failing(dir, onCommit), null,
        Duration.ofSeconds(60), false)) {
      assertFalse(store.broken());
      InjectedError error = new InjectedError("stack overflow while committing");
      onCommit.set(error);
      InjectedError thrown = assertThrows(InjectedError.class, () -> store.write(Durability.SYNC, null,
          s -> s.connection().createStatement().executeUpdate("CREATE TABLE t(x)")));
      assertSame(error, thrown);
      assertTrue(store.broken());
      onCommit.set(null);
      JournalException later = assertThrows(JournalException.class, () -> store.write(Durability.SYNC, null,
          s -> s.connection().createStatement().executeUpdate("CREATE TABLE u(x)")));
      assertSame(error, later.getCause());
    }
  }

  @Test
  void errorInsideAUnitBreaksTheStore(@TempDir Path dir) throws Exception {
    try (SingleConnectionStore store = new SingleConnectionStore("journal", "t", failing(dir, new AtomicReference<>()), null,
        Duration.ofSeconds(60), false)) {
      InjectedError error = new InjectedError("out of memory while encoding a record");
      assertThrows(InjectedError.class, () -> store.write(Durability.SYNC, null, s -> {
        throw error;
      }));
      assertTrue(store.broken());
      JournalException later = assertThrows(JournalException.class,
          () -> store.read(null, s -> s.connection().createStatement().executeQuery("SELECT 1").next()));
      assertSame(error, later.getCause());
    }
  }

  /** A SQLite connection whose commit() throws the Error set in {@code onCommit}, if any. */
  private static Connection failing(Path dir, AtomicReference<Error> onCommit) throws Exception {
    Connection real = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("j.db"));
    return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
        (proxy, method, args) -> {
          Error e = onCommit.get();
          if (e != null && method.getName().equals("commit")) {
            throw e;
          }
          try {
            return method.invoke(real, args);
          } catch (InvocationTargetException ex) {
            throw ex.getCause();
          }
        });
  }
}
