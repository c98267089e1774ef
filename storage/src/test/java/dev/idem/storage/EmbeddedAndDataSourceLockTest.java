package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * Every store opened by {@link StoreOpener} (the journal, the guard's store, the webhook inbox)
 * holds its SQLite file alone, whichever way it was opened: an embedded open in a directory of its
 * own (the journal's and the inbox's layout), an embedded open of a file in the app's directory (the
 * guard's), or an open through an app's {@link SQLiteDataSource} on the same file. Before, the
 * embedded open locked only its companion {@code .lock} file and the DataSource open only
 * {@code <file>.idem-<store>.lock}, so an open of one kind beside a live one of the other was not
 * refused, and its crash recovery took the live store's leases for a dead process's.
 */
class EmbeddedAndDataSourceLockTest {
  private static final Schema SCHEMA = new Schema("test store", EmbeddedAndDataSourceLockTest.class,
      "dev/idem/storage/testschema/", "test_version", "test_meta", Schema.Adoption.NONE);

  @TempDir
  Path tmp;

  @Test
  void aStoreInItsOwnDirectoryIsRefusedToTheOtherKindOfOpenInEitherOrder() throws Exception {
    Layout own = new Layout(tmp.resolve("own"), "t.db", "t", "test store", "EmbeddedAndDataSourceLockTest", true);
    refusedInEitherOrder(own);
  }

  @Test
  void aStoreFileInTheAppsDirectoryIsRefusedToTheOtherKindOfOpenInEitherOrder() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("app"));
    refusedInEitherOrder(Layout.file(dir.resolve("guard.db"), "test store", "EmbeddedAndDataSourceLockTest"));
  }

  private void refusedInEitherOrder(Layout layout) throws Exception {
    String embeddedFirst;
    Opened embedded = embedded(layout);
    try {
      insert(embedded.store, 1);
      embeddedFirst = assertThrows(JournalException.class, () -> dataSource(layout)).getMessage();
      insert(embedded.store, 2); // the live store goes on
    } finally {
      embedded.close();
    }
    String dataSourceFirst;
    Opened viaDataSource = dataSource(layout);
    try {
      dataSourceFirst = assertThrows(JournalException.class, () -> embedded(layout)).getMessage();
      insert(viaDataSource.store, 3);
    } finally {
      viaDataSource.close();
    }
    assertEquals(embeddedFirst, dataSourceFirst, "one lock, one message, whichever open came first");
    assertTrue(embeddedFirst.contains("already open in this JVM")
        && embeddedFirst.contains(layout.database().toRealPath().toString()), embeddedFirst);
    Opened reopened = embedded(layout);
    try {
      assertEquals(3, count(reopened.store), "every write of both opens is there");
    } finally {
      reopened.close();
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

  private static Opened dataSource(Layout layout) throws Exception {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + layout.database());
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
