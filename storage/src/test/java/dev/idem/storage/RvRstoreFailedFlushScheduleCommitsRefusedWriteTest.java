package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (storage, a failure after a unit's write ran): {@code SingleConnectionStore.execute} runs
 * the unit (its savepoint released: the write is in the open transaction), then {@code written()}
 * for a DEFERRED write, which counts it ({@code ++executedSeq}), sets {@code flushScheduled = true}
 * and only then schedules the background flush. If that scheduling throws, the caller is handed the
 * failure as if its write had not happened ({@code unit.end(e)}), yet the write stays in the
 * transaction, the store is not broken, and the next commit round (anyone's SYNC write, the
 * close) makes it durable: a caller told "failed" whose write is in the database. For the journal
 * that is an inline call's first claim (DEFERRED, {@code JdbcJournal} claims with
 * {@code claimed.durable() ? SYNC : DEFERRED}) reported failed but recorded; for the guard a fresh
 * claim, a renewal or a release. And {@code flushScheduled} stays true for good: no deferred write
 * of this store is ever flushed in the background again (the "within the deferred commit interval"
 * promise), its transaction (and, in a file the app's connections share, SQLite's write lock)
 * staying open until some SYNC write comes.
 *
 * <p>The scheduling fails when the flusher's thread, made lazily at the first DEFERRED write,
 * cannot be started ("OutOfMemoryError: unable to create native thread"), or, as here
 * deterministically, when the deferred commit interval does not fit in nanoseconds
 * ({@code toNanos()} throws ArithmeticException): every builder (JdbcJournal.Builder
 * {@code deferredCommitInterval}, which checks only that it is positive) passes such an interval
 * on, e.g. a thousand years to mean "only SYNC writes commit".
 */
class RvRstoreFailedFlushScheduleCommitsRefusedWriteTest {
  @TempDir
  Path dir;

  @Test
  void aDeferredWriteWhoseCallerIsToldItFailedIsNotCommittedLater() throws Exception {
    Connection connection = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("j.db"));
    try (Statement st = connection.createStatement()) {
      st.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)");
    }
    try (SingleConnectionStore store = new SingleConnectionStore("journal", "t", connection, null,
        Duration.ofDays(365L * 1000), false)) {
      Throwable told = null;
      try {
        store.write(Durability.DEFERRED, 1, s -> insert(s, 1));
      } catch (RuntimeException | Error e) {
        told = e;
      }

      store.write(Durability.SYNC, 2, s -> insert(s, 2)); // another caller's durable write: a commit round

      int kept = store.read(1, s -> {
        try (Statement st = s.connection().createStatement();
            ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM t WHERE id = 1")) {
          rs.next();
          return rs.getInt(1);
        }
      });
      if (told != null) {
        assertEquals(0, kept, "the deferred write's caller was told it failed (" + told
            + "), yet the next commit round made its write durable");
      } else {
        assertEquals(1, kept, "a deferred write that returned is committed by the next round");
      }
    }
  }

  private static int insert(SqlSession s, int id) throws java.sql.SQLException {
    try (PreparedStatement ps = s.connection().prepareStatement("INSERT INTO t (id) VALUES (?)")) {
      ps.setInt(1, id);
      return ps.executeUpdate();
    }
  }
}
