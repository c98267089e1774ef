package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * A store's SQLite file reached through a symbolic link. SQLite follows the link: the database,
 * and the {@code -wal} and {@code -shm} files it makes, are the target's. Every file of the store's
 * own (the single-owner locks, the id, the open marker, the {@code -wal} file it syncs after each
 * commit and checks at open) must be resolved the same way, from the target's real path, whether
 * the file exists yet or not; otherwise two opens by two names are two stores to Idem, and the
 * -wal file the store syncs is one SQLite never writes.
 */
class SymlinkedDatabaseTest {
  private static final Schema SCHEMA = new Schema("test store", SymlinkedDatabaseTest.class,
      "dev/idem/storage/testschema/", "test_version", "test_meta", Schema.Adoption.NONE);

  @TempDir
  Path tmp;

  /**
   * The app's file given by a link whose target does not exist yet (a first start): before, the
   * open failed, saying a file was in the way of the directory, and an open by the real path
   * locked the name given, beside the link.
   */
  @Test
  void aLinkToAFileNotCreatedYetOpensAtTheTargetAndLocksItAgainstItsRealPath() throws Exception {
    Path app = Files.createDirectories(tmp.resolve("app"));
    Path real = app.resolve("real.db");
    Path link = symlink(app.resolve("link.db"), real);

    Opened viaLink = embedded(Layout.file(link, "test store", "T"));
    try {
      insert(viaLink.store, 1);
      assertTrue(Files.isRegularFile(real) && Files.isSymbolicLink(link), "the target is created, the link kept");
      assertThrows(JournalException.class, () -> embedded(Layout.file(real, "test store", "T")));
      assertThrows(JournalException.class, () -> dataSource(real));
      insert(viaLink.store, 2);
    } finally {
      viaLink.close();
    }
    Opened viaReal = embedded(Layout.file(real, "test store", "T"));
    try {
      assertEquals(2, count(viaReal.store));
    } finally {
      viaReal.close();
    }
  }

  /**
   * Through a link to an existing file, the store's files are the target's: the open marker a crash
   * leaves and the id are found by an open by either name, and the -wal file the store syncs after
   * each commit (and counts in its size) is the one SQLite writes. Before, Idem created its own
   * -wal, lock, id and open files beside the link, and synced an empty -wal file.
   */
  @Test
  void throughALinkTheStoresFilesAreTheTargetsAndItSyncsTheWalSqliteWrites() throws Exception {
    Path app = Files.createDirectories(tmp.resolve("app"));
    Path real = app.resolve("real.db");
    embedded(Layout.file(real, "test store", "T")).close();
    Path link = symlink(app.resolve("link.db"), real);
    Set<String> before = names(app);

    Opened viaLink = embedded(Layout.file(link, "test store", "T"));
    try {
      insert(viaLink.store, 1);
      assertTrue(Files.size(app.resolve("real.db-wal")) > 0, "SQLite writes the target's -wal");
      assertEquals(Files.size(real) + Files.size(app.resolve("real.db-wal")), viaLink.opened.size().bytes(),
          "the store counts that -wal");
      Set<String> now = names(app);
      now.removeAll(List.of("real.db-wal", "real.db-shm", "real.db.open"));
      assertEquals(before, now, "nothing of the store's own beside the link");
      assertFalse(Files.exists(app.resolve("link.db-wal")), "no -wal file of Idem's own making to sync");
    } finally {
      viaLink.close();
    }
  }

  /**
   * A read-only open through the link (the CLI's, beside the running app) reads what SQLite wrote,
   * in the target's -wal file. Before, it looked for the -wal file beside the link.
   */
  @Test
  void aReadOnlyOpenThroughTheLinkReadsTheLiveStoresCommits() throws Exception {
    Path app = Files.createDirectories(tmp.resolve("app"));
    Path real = app.resolve("real.db");
    Path link = symlink(app.resolve("link.db"), real);
    Opened live = embedded(Layout.file(real, "test store", "T"));
    try {
      insert(live.store, 1);
      insert(live.store, 2);
      Opened reader = opener().openEmbeddedReadOnly(Layout.file(link, "test store", "T"),
          (name, dialect, store, version, opened) -> new Opened(store, opened));
      try {
        assertEquals(2, count(reader.store));
      } finally {
        reader.store.close("test");
      }
    } finally {
      live.close();
    }
  }

  /**
   * A store that owns its directory (the journal's layout) whose database file is a link elsewhere:
   * SQLite keeps the -wal and -shm files beside the target, outside the directory whose files the
   * store syncs and checks. Refused, saying why and what to do, rather than opened with a -wal file
   * the store never syncs.
   */
  @Test
  void aStoreOwningItsDirectoryRefusesADatabaseFileThatIsALinkElsewhere() throws Exception {
    Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere"));
    Path target = Files.createFile(elsewhere.resolve("t.db"));
    Path dir = Files.createDirectories(tmp.resolve("own"));
    symlink(dir.resolve("t.db"), target);
    Layout own = new Layout(dir, "t.db", "t", "test store", "T", true);

    JournalException e = assertThrows(JournalException.class, () -> embedded(own).close());
    assertTrue(e.getMessage().contains("symbolic link") && e.getMessage().contains(target.toRealPath().toString()),
        e.getMessage());
    assertTrue(e.getMessage().contains("t.db-wal, to " + dir.toRealPath().resolve("t.db-wal")),
        "the target's -wal file, and the name it must have once moved: " + e.getMessage());
    assertEquals(Set.of("t.db"), names(elsewhere), "nothing written beside the target");
    assertEquals(0, Files.size(target));

    Files.delete(target); // the same for a link whose target is not created yet
    e = assertThrows(JournalException.class, () -> embedded(own).close());
    assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
    assertEquals(Set.of(), names(elsewhere));
  }

  private static Path symlink(Path link, Path target) throws IOException {
    try {
      return Files.createSymbolicLink(link, target);
    } catch (UnsupportedOperationException | IOException e) {
      Assumptions.assumeTrue(false, "no symbolic links on this file system: " + e);
      throw e;
    }
  }

  private static Set<String> names(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return new TreeSet<>(files.map(f -> f.getFileName().toString()).toList());
    }
  }

  private record Opened(Store store, StoreOpener.Opened opened) {
    void close() throws Exception {
      opened.close(store, "test");
    }
  }

  private static StoreOpener opener() {
    return new StoreOpener(SCHEMA, false, Duration.ofHours(1), Clock.systemUTC());
  }

  private static Opened embedded(Layout layout) throws Exception {
    return opener().openEmbedded(layout, (name, dialect, store, version, opened) -> new Opened(store, opened));
  }

  private static Opened dataSource(Path file) throws Exception {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + file);
    return opener().openDataSource(ds, (name, dialect, store, version, opened) -> new Opened(store, opened));
  }

  private static void insert(Store store, int id) throws Exception {
    store.write(Durability.SYNC, id, s -> {
      PreparedStatement p = s.prepare("INSERT INTO t (id) VALUES (?)");
      p.setInt(1, id);
      return p.executeUpdate();
    });
  }

  private static int count(Store store) throws Exception {
    return store.read(null, s -> {
      try (ResultSet rs = s.prepare("SELECT COUNT(*) FROM t").executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    });
  }
}
