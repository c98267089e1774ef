package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (storage, an open refused after a crash): an embedded store that crashed (its open marker
 * says "open", its {@code -wal} file holds its last commits) and is then opened by an older Idem
 * (the usual first move after an upgrade went wrong: roll back) is refused, rightly, as a schema
 * newer than that version. But that failed open had already opened SQLite on it, and its
 * {@code closeQuietly(..., connection, files)} is SQLite's last close, which checkpoints the
 * {@code -wal} file into the database and removes it, while nothing touches the crash marker. Every
 * open after that, by the newer Idem again included, is refused: "not closed cleanly, and its -wal
 * file, which holds its latest commits, is missing: writes acknowledged as durable may be lost.
 * Restore the file from a backup", although every commit is in the database file. The same holds
 * for any embedded open that fails after SQLite opened the file of a crashed store (a version-table
 * gap, a failed migration, a transient I/O error). Unlike RvRstoreFailedOpenRefusesNextOpenTest,
 * no store is built or broken here, and the marker is the crashed process's, not the failed open's.
 *
 * <p>The crash is made without a child JVM: the files of a store that is open (database, {@code
 * -wal}, id file, open marker) are copied aside, as a kill -9 would leave them.
 */
class RvRstoreDowngradeAfterCrashTest {
  private static final Schema NEWER = new Schema("test store", RvRstoreDowngradeAfterCrashTest.class,
      "dev/idem/storage/rvrstorenewer/", "test_version", "test_meta", Schema.Adoption.NONE);
  private static final Schema OLDER = new Schema("test store", RvRstoreDowngradeAfterCrashTest.class,
      "dev/idem/storage/testschema/", "test_version", "test_meta", Schema.Adoption.NONE);

  @TempDir
  Path tmp;

  private static Layout layout(Path dir) {
    return new Layout(dir.toAbsolutePath().normalize(), "test.db", "test", "test store", "T", true);
  }

  private static StoreOpener opener(Schema schema) {
    return new StoreOpener(schema, false, Duration.ofHours(1), Clock.systemUTC());
  }

  @Test
  void aCrashedStoreRefusedByAnOlderVersionStillOpensWithTheNewerOne() throws Exception {
    Path running = tmp.resolve("running");
    Path crashed = Files.createDirectories(tmp.resolve("crashed"));
    opener(NEWER).openEmbedded(layout(running), (name, dialect, store, version, opened) -> {
      store.write(Durability.SYNC, null, s -> {
        try (Statement st = s.connection().createStatement()) {
          st.executeUpdate("INSERT INTO t (id, v) VALUES (1, 'acknowledged')");
        }
        return null;
      });
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
    assertTrue(Files.exists(crashed.resolve("test.db-wal")) && Files.exists(crashed.resolve("test.open")),
        "premise: the crash left the -wal file and the open marker");

    JournalException older = assertThrows(JournalException.class,
        () -> opener(OLDER).openEmbedded(layout(crashed), (name, dialect, store, version, opened) -> {
          opened.close(store, "test");
          return null;
        }));
    assertTrue(older.getMessage().contains("newer than this Idem version"), "premise: " + older.getMessage());
    assertTrue(Files.notExists(crashed.resolve("test.db-wal")), "the refused open's SQLite close removed the -wal file");
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(
            "jdbc:sqlite:" + crashed.resolve("test.db").toUri() + "?immutable=1");
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM t")) {
      rs.next();
      assertEquals(1, rs.getInt(1), "premise: ... after checkpointing its commits into the database file: none is lost");
    }

    int rows = assertDoesNotThrow(() -> opener(NEWER).openEmbedded(layout(crashed),
        (name, dialect, store, version, opened) -> {
          int n = store.read(null, s -> {
            try (Statement st = s.connection().createStatement();
                ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM t")) {
              rs.next();
              return rs.getInt(1);
            }
          });
          opened.close(store, "test");
          return n;
        }), "the newer version opens the crashed store again after an older one refused it");
    assertEquals(1, rows, "with its acknowledged commit");
  }
}
