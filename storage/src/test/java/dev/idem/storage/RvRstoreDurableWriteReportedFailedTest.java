package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (storage, what a caller is told): {@code SingleConnectionStore.awaitRound} ends, after the
 * caller's commit round has ended well (its write committed and synced: durable), with
 * {@code failIfBroken()}. If the store broke in between (by design the next group's statements run
 * during the round's disk sync: another caller's statement that takes the open transaction with it
 * on a full disk, or a unit's Error), the caller whose write IS durable is told
 * "... is unusable after a failed write; reopen it", a plain JournalException, not a
 * {@link CommitUnconfirmedException}. The journal explains a plain JournalException from a begin as
 * "nothing was sent: an operation with no durable record is never sent" ({@code JdbcJournal.begin},
 * {@code NOT_BEGUN}), so the app may retry the call under a new key, while the begin's record is
 * durable and the next resumePending sends it under the old one: the effect twice. The store's own
 * doc names this hazard ("a caller that left with an exception was told its write did not happen
 * while the journal kept it ... after its caller retried with a new key"). Here the other caller's
 * unit fails with an Error during the round's disk sync (the test's DiskSync runs it there, on
 * another thread, the way the next group's statements run during a real sync).
 */
class RvRstoreDurableWriteReportedFailedTest {
  static final class InjectedError extends Error {
    InjectedError(String message) {
      super(message);
    }
  }

  @TempDir
  Path dir;

  @Test
  void aCallerWhoseWriteIsDurableIsNotToldItWasNotWritten() throws Exception {
    Path db = dir.resolve("j.db");
    Connection connection = DriverManager.getConnection("jdbc:sqlite:" + db);
    try (Statement st = connection.createStatement()) {
      st.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)");
    }
    AtomicReference<SingleConnectionStore> storeRef = new AtomicReference<>();
    AtomicReference<Throwable> other = new AtomicReference<>();
    DiskSync syncDuringWhichAnotherCallerFails = new DiskSync() {
      @Override
      public void sync() throws java.sql.SQLException {
        Thread t = new Thread(() -> {
          try {
            storeRef.get().write(Durability.SYNC, "other", s -> {
              throw new InjectedError("out of memory while encoding another caller's record");
            });
          } catch (Throwable e) {
            other.set(e);
          }
        }, "rvrstore-other-caller");
        t.start();
        try {
          t.join();
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
      }

      @Override
      public void close() {
      }
    };
    SingleConnectionStore store = new SingleConnectionStore("journal", "t", connection,
        syncDuringWhichAnotherCallerFails, Duration.ofHours(1), false);
    storeRef.set(store);

    Throwable told = null;
    try {
      store.write(Durability.SYNC, 1, s -> {
        try (PreparedStatement ps = s.connection().prepareStatement("INSERT INTO t (id) VALUES (1)")) {
          return ps.executeUpdate();
        }
      });
    } catch (IdempotencyException | RuntimeException | Error e) {
      told = e;
    }
    assertTrue(other.get() instanceof InjectedError, "premise: the other caller's unit broke the store: " + other.get());
    assertTrue(store.broken(), "premise: the store is broken");
    try {
      store.close();
    } catch (IdempotencyException expected) {
      // broken
    }

    try (Connection check = DriverManager.getConnection("jdbc:sqlite:" + db);
        Statement st = check.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM t WHERE id = 1")) {
      rs.next();
      assertEquals(1, rs.getInt(1), "premise: the caller's write was committed and synced");
    }
    Throwable t = told;
    assertTrue(t == null || t instanceof CommitUnconfirmedException, () -> "the caller whose write is durable was"
        + " told it failed as if nothing had been written: " + t);
  }
}
