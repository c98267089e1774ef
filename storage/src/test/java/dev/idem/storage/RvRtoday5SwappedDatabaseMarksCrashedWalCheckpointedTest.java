package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review rtoday5 (commit d4dc3086, {@code StoreOpener.openEmbedded}'s failure path now calls
 * {@code EmbeddedFiles.markFailedOpen}): the mark is written for every open that fails once SQLite
 * opened the file, including an open refused BECAUSE the file SQLite opened is not this store's
 * database ({@code EmbeddedFiles.reconcileId}: "a database file from elsewhere was copied in. Put
 * the right file back"). SQLite does not tie a {@code -wal} file to its database file: that failed
 * open's SQLite close checkpoints the crashed store's {@code -wal} file (its acknowledged commits)
 * into the foreign database file and removes it, and the new code then rewrites the crashed
 * store's open marker as "closed after a failure; -wal checkpointed". When the operator does what
 * the message says and puts the store's own database file back, the next open accepts it silently,
 * without the commits that were only in the {@code -wal} file: acknowledged writes lost with no
 * error. Before d4dc3086 the marker still said "open", and that open was refused ("its -wal file,
 * which holds its latest commits, is missing: writes acknowledged as durable may be lost"), which
 * is the very loss the marker exists to report. A -wal checkpointed into a file that is not the
 * store's must not be vouched for by the store's marker.
 *
 * <p>Fixed both ways: a file whose own pages hold another store's id is refused before SQLite opens
 * it to write, so the crashed store's {@code -wal} file is left as it was (the first case, which
 * asserted the checkpoint as its premise before the fix); a foreign file known only once SQLite
 * opened it (no store id in it: the second case) gets SQLite's checkpoint, but the marker is not
 * rewritten, and the right file put back is refused as one whose -wal file is missing.
 *
 * <p>The crash is made as in RvRstoreDowngradeAfterCrashTest: the files of an open store are
 * copied aside, as a kill -9 would leave them.
 */
class RvRtoday5SwappedDatabaseMarksCrashedWalCheckpointedTest {
  private static final Schema SCHEMA = new Schema("test store",
      RvRtoday5SwappedDatabaseMarksCrashedWalCheckpointedTest.class, "dev/idem/storage/testschema/", "test_version",
      "test_meta", Schema.Adoption.NONE);

  @TempDir
  Path tmp;

  private static Layout layout(Path dir) {
    return new Layout(dir.toAbsolutePath().normalize(), "test.db", "test", "test store", "T", true);
  }

  private static StoreOpener opener() {
    return new StoreOpener(SCHEMA, false, Duration.ofHours(1), Clock.systemUTC());
  }

  private static void insert(Store store, int id, String v) throws IdempotencyException {
    store.write(Durability.SYNC, null, s -> {
      try (Statement st = s.connection().createStatement()) {
        st.executeUpdate("INSERT INTO t (id, v) VALUES (" + id + ", '" + v + "')");
      }
      return null;
    });
  }

  private static int count(Path db) throws Exception {
    try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + db.toUri() + "?immutable=1");
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM t")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  @Test
  void aCrashedStoresWalCheckpointedIntoAForeignDatabaseIsNotVouchedForByItsMarker() throws Exception {
    // Another store B (another id), closed cleanly: its id is in its database file's pages.
    Path other = tmp.resolve("other");
    opener().openEmbedded(layout(other), (name, dialect, store, version, opened) -> {
      opened.close(store, "test");
      return null;
    });
    Path crashed = crashedStore();
    swapInAndOpen(crashed, other.resolve("test.db"), "copied in");
    // Refused before SQLite opened B's file to write: its close did not checkpoint A's -wal file into it.
    assertTrue(Files.exists(crashed.resolve("test.db-wal")) && Files.size(crashed.resolve("test.db-wal")) > 0,
        "A's -wal file (its acknowledged write) was checkpointed into B's database file by the refused open");
    putBackAndCheck(crashed);
  }

  /**
   * The same with a foreign file that holds no store id (an app's own SQLite file): it is found not
   * to be the store's only once SQLite has opened it, whose close then checkpoints A's -wal file
   * into it. The marker must go on saying that A's own file lacks those commits.
   */
  @Test
  void aCrashedStoresWalCheckpointedIntoAFileWithNoStoreIdIsNotVouchedForByItsMarker() throws Exception {
    Path foreign = Files.createDirectories(tmp.resolve("app")).resolve("app.db");
    try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + foreign);
        Statement st = c.createStatement()) {
      st.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    }
    Path crashed = crashedStore();
    swapInAndOpen(crashed, foreign, "not a test store");
    putBackAndCheck(crashed);
  }

  /** Store A, crashed after a second acknowledged write that only its -wal file holds. */
  private Path crashedStore() throws Exception {
    Path running = tmp.resolve("running");
    Path crashed = Files.createDirectories(tmp.resolve("crashed"));

    // Store A ran once and closed cleanly (everything in its database file).
    opener().openEmbedded(layout(running), (name, dialect, store, version, opened) -> {
      insert(store, 1, "checkpointed");
      opened.close(store, "test");
      return null;
    });
    // Then it ran again, acknowledged a second write, and was killed: that write is only in its -wal.
    opener().openEmbedded(layout(running), (name, dialect, store, version, opened) -> {
      insert(store, 2, "acknowledged, only in the -wal file");
      try {
        for (String f : new String[] {"test.db", "test.db-wal", "test.id", "test.open"}) {
          Files.copy(running.resolve(f), crashed.resolve(f));
        }
      } catch (java.io.IOException e) {
        throw new AssertionError(e);
      }
      opened.close(store, "test");
      return null;
    });
    assertTrue(Files.size(crashed.resolve("test.db-wal")) > 0, "premise: the crash left A's -wal file");
    assertEquals(1, count(crashed.resolve("test.db")), "premise: the second write is not in A's database file");
    return crashed;
  }

  /** Someone copies {@code foreignDb} over A's (A's own kept aside): the open is refused, rightly. */
  private void swapInAndOpen(Path crashed, Path foreignDb, String refusal) throws Exception {
    Files.move(crashed.resolve("test.db"), tmp.resolve("a-own-test.db"));
    Files.copy(foreignDb, crashed.resolve("test.db"));
    JournalException refused = assertThrows(JournalException.class,
        () -> opener().openEmbedded(layout(crashed), (name, dialect, store, version, opened) -> {
          opened.close(store, "test");
          return null;
        }));
    assertTrue(String.valueOf(refused.getMessage()).contains(refusal), "premise: " + refused.getMessage());
  }

  /** The operator puts A's own database file back, as the message says: its write is there, or its loss told. */
  private void putBackAndCheck(Path crashed) throws Exception {
    String marker = Files.readString(crashed.resolve("test.open")).strip();
    Files.move(tmp.resolve("a-own-test.db"), crashed.resolve("test.db"), StandardCopyOption.REPLACE_EXISTING);
    int rows;
    try {
      rows = opener().openEmbedded(layout(crashed), (name, dialect, store, version, opened) -> {
        int n = store.read(null, s -> {
          try (Statement st = s.connection().createStatement();
              ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM t")) {
            rs.next();
            return rs.getInt(1);
          }
        });
        opened.close(store, "test");
        return n;
      });
    } catch (JournalException e) {
      // Refused as a crash whose -wal file (with acknowledged commits) is missing: the loss is reported.
      assertTrue(String.valueOf(e.getMessage()).contains("is missing"), e.getMessage());
      return;
    }
    if (rows != 2) {
      fail("A's own database file was opened without a word although its acknowledged write (row 2) was lost"
          + " (checkpointed into the foreign file by the refused open): rows=" + rows + "; the refused open had"
          + " rewritten A's crash marker as \"" + marker + "\"");
    }
  }
}
