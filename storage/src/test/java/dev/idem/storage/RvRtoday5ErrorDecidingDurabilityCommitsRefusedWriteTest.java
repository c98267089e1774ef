package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.IdempotencyException;
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
 * Review rtoday5 (commit a0295a9a and issue 15's rule it cites: "An Error there ... breaks the
 * store, as an Error in a unit does, so the write it follows is never committed, as its caller is
 * told"): in {@code SingleConnectionStore.execute}, only an Error thrown by the unit's work
 * ({@code runAtomically}) and, since a0295a9a, by scheduling the background flush breaks the store.
 * An Error thrown after the work ran and its savepoint was released, while the write's durability
 * is decided ({@code unit.decide.apply}: JdbcJournal.claimAll's {@code leases.stream()...}, an
 * allocation where an OutOfMemoryError lands) or recorded ({@code written}'s map updates), is
 * caught by the same {@code catch (... | Error e) { unit.end(e); }} and handed to the caller, and
 * the store stays usable: the write stays in the open transaction and the next caller's commit
 * makes it durable. The caller was told its write failed (an Error; JdbcJournal.begin's callers
 * explain a failed begin as nothing sent), while the journal keeps it: exactly what a0295a9a set
 * out to prevent on the schedule path, still open here.
 */
class RvRtoday5ErrorDecidingDurabilityCommitsRefusedWriteTest {
  static final class InjectedError extends Error {
    InjectedError(String message) {
      super(message);
    }
  }

  @TempDir
  Path dir;

  @Test
  void anErrorWhileTheWritesDurabilityIsDecidedNeitherBreaksTheStoreNorUndoesTheWrite() throws Exception {
    Path db = dir.resolve("j.db");
    Connection connection = DriverManager.getConnection("jdbc:sqlite:" + db);
    try (Statement st = connection.createStatement()) {
      st.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)");
    }
    SingleConnectionStore store = new SingleConnectionStore("journal", "t", connection, null, Duration.ofHours(1),
        false);
    InjectedError error = new InjectedError("Java heap space (injected while deciding the write's durability)");
    InjectedError thrown = assertThrows(InjectedError.class, () -> store.writeDeciding(1, s -> insert(s, 1), r -> {
      throw error;
    }));
    assertSame(error, thrown, "premise: the caller of write 1 is told it failed, with the Error");

    boolean brokenAfter = store.broken();
    Throwable second = null;
    try {
      store.write(Durability.SYNC, 2, s -> insert(s, 2)); // another caller's write, and its commit
    } catch (IdempotencyException | RuntimeException e) {
      second = e;
    }
    store.close();

    try (Connection check = DriverManager.getConnection("jdbc:sqlite:" + db);
        Statement st = check.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM t WHERE id = 1")) {
      rs.next();
      if (rs.getInt(1) != 0) {
        fail("write 1, whose caller was told it failed (" + error + "), was committed by the next caller's round"
            + " (store broken after the Error: " + brokenAfter + ", second write "
            + (second == null ? "succeeded" : "failed: " + second) + ")");
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
