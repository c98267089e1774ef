package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (storage, an Error in the commit round): {@code SingleConnectionStore.commitRound} guards
 * the commit and the disk sync against any Throwable (an Error breaks the store and reaches every
 * caller the round covers: issue 15, {@link SingleConnectionStoreErrorTest}), but the file check
 * that follows them, {@code filesGone()} ({@link FileIdentity#change()}, a {@code stat} of the
 * database file and the lock file, with the allocations of its attributes and messages), runs
 * outside that guard, and so do the wake-ups and {@code releaseRound()} after it. An Error there
 * (an OutOfMemoryError "Java heap space" at any allocation, a StackOverflowError in a deep caller
 * put on duty) leaves the thread on duty with the Error, and everything else stranded: the round
 * is never let go ({@code committing} stays true), the other callers of its batch are never woken,
 * the store is not marked broken, and every later SYNC write and the store's close() park for ever
 * in {@code awaitRound}, where the convention (issue 15) is a clear error for each of them. This
 * test makes the {@code stat} throw with a database-file path whose file system lookup throws the
 * injected Error.
 */
class RvRstoreErrorAfterCommitStrandsRoundTest {
  /** The Error injected into the round's file check. */
  static final class InjectedError extends Error {
    InjectedError(String message) {
      super(message);
    }
  }

  @TempDir
  Path dir;

  @Test
  void anErrorInTheRoundsFileCheckLeavesNoCallerAndNoCloseWaitingForEver() throws Exception {
    Path db = dir.resolve("j.db");
    Connection connection = DriverManager.getConnection("jdbc:sqlite:" + db);
    try (Statement st = connection.createStatement()) {
      st.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)");
    }
    InjectedError error = new InjectedError("Java heap space (injected into the stat after the commit)");
    // The database file as the store opened it; looking its path up (Files.readAttributes ->
    // path.getFileSystem()) throws the Error, as an allocation in that stat would.
    Path throwing = (Path) Proxy.newProxyInstance(Path.class.getClassLoader(), new Class<?>[] {Path.class},
        (proxy, method, args) -> {
          if (method.getName().equals("getFileSystem")) {
            throw error;
          }
          if (method.getName().equals("toString")) {
            return db.toString();
          }
          return method.invoke(db, args);
        });
    FileIdentity databaseFile = new FileIdentity(throwing, "the file key", null);
    SingleConnectionStore store = new SingleConnectionStore("journal", "t", connection, null, Duration.ofHours(1),
        false, null, databaseFile, null);
    ExecutorService callers = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "rvrstore-caller");
      t.setDaemon(true); // a caller stranded by the defect must not keep the test JVM alive
      return t;
    });
    try {
      // First caller: its own commit round commits, then the file check throws.
      Throwable first = outcome(callers.submit(() -> insert(store, 1)));
      assertSame(error, first, "the caller on duty gets the Error");

      // A later caller must be told, promptly, that the store is unusable (and why), not park for ever.
      Throwable second = outcome(callers.submit(() -> insert(store, 2)));
      assertNotNull(second, "a write after an unknown-outcome round is refused, not reported durable");

      // And close() must return (it may throw), not wait for a round nobody runs.
      outcome(callers.submit(() -> {
        store.close();
        return null;
      }));
    } finally {
      callers.shutdownNow();
    }
  }

  private static Object insert(SingleConnectionStore store, int id) throws Exception {
    return store.write(Durability.SYNC, id, s -> {
      try (PreparedStatement ps = s.connection().prepareStatement("INSERT INTO t (id) VALUES (?)")) {
        ps.setInt(1, id);
        return ps.executeUpdate();
      }
    });
  }

  /** What the call threw (null if it returned), failing the test if it is still running after 10 s. */
  private static Throwable outcome(Future<?> call) throws InterruptedException {
    try {
      call.get(10, TimeUnit.SECONDS);
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (TimeoutException e) {
      StringBuilder where = new StringBuilder();
      Thread.getAllStackTraces().forEach((t, stack) -> {
        if (t.getName().equals("rvrstore-caller") && stack.length > 0) {
          where.append("\n  ").append(stack[0]).append(stack.length > 3 ? " <- " + stack[3] : "");
        }
      });
      fail("the call is still waiting after 10 s: the round was never let go" + where);
      return null;
    }
  }

}
