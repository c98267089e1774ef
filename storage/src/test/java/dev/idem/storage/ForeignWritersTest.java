package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * A store over a file other connections may write (the guard's, shared with the app's connections
 * in transactional mode) syncs its {@code -wal} file outside its lock only while nobody else writes
 * the file: an app's commit between the store's commit and its sync could, after a power loss,
 * leave a torn frame of the store's under the app's intact commit, which {@link WalCheck} refuses
 * as damage (the last test shows that shape refused, and SQLite alone dropping the later commit).
 * Each of the first four tests failed before the store watched for other writers (it kept
 * {@code synchronous=FULL}, 2, from the start, and had no {@code expectOtherWriters}).
 */
class ForeignWritersTest {
  private static final Schema SCHEMA = new Schema("test store", ForeignWritersTest.class,
      "dev/idem/storage/testschema/", "test_version", "test_meta", Schema.Adoption.NONE);

  @TempDir
  Path tmp;

  @Test
  void anotherConnectionsCommitSwitchesTheStoreToFullForGoodAndLaterOpensStartThere() throws Exception {
    Layout layout = shared();
    Opened first = openStore(layout);
    try (Connection app = appConnection(layout)) {
      insert(first.store, 1);
      insert(first.store, 2);
      assertEquals(1, WalSyncTest.synchronous(first.store), "its own commits are not another writer's");
      try (Statement st = app.createStatement()) {
        st.execute("INSERT INTO t (id) VALUES (100)");
      }
      insert(first.store, 3); // its commit round sees the app's commit
      assertEquals(2, WalSyncTest.synchronous(first.store), "FULL once another connection has committed");
      insert(first.store, 4);
      assertEquals(2, WalSyncTest.synchronous(first.store), "for good");
      assertEquals(5, count(app), "every write of both is there");
    } finally {
      first.close();
    }
    Opened again = openStore(layout);
    try {
      assertEquals(2, WalSyncTest.synchronous(again.store), "the next open starts with FULL: the file is shared");
    } finally {
      again.close();
    }
  }

  @Test
  void aFileHoldingATableThatIsNotTheStoresStartsWithFull() throws Exception {
    Layout layout = shared();
    try (Connection app = appConnection(layout); Statement st = app.createStatement()) {
      st.execute("PRAGMA journal_mode=WAL");
      st.execute("CREATE TABLE orders (op TEXT NOT NULL)");
    }
    Opened opened = openStore(layout);
    try {
      assertEquals(2, WalSyncTest.synchronous(opened.store), "the app's table says its connections write here");
    } finally {
      opened.close();
    }
  }

  @Test
  void expectOtherWritersSyncsEveryEarlierCommitThenCommitsWithFull() throws Exception {
    Layout layout = shared();
    try (Store bootstrap = WalSyncTest.open(layout)) {
      bootstrap.flush(); // creates the schema
    }
    Connection c = StoreOpener.sqliteDataSource(layout.database(), false, false).getConnection();
    try (Statement st = c.createStatement()) {
      st.execute("PRAGMA synchronous=NORMAL");
    }
    AtomicInteger syncs = new AtomicInteger();
    DiskSync counting = new DiskSync() {
      @Override
      public void sync() {
        syncs.incrementAndGet();
      }

      @Override
      public void close() {
      }
    };
    try (SingleConnectionStore store = new SingleConnectionStore("test store", "t", c, counting,
        Duration.ofHours(1), true, ForeignWriters.watch(c, "test_meta"))) {
      insert(store, 1);
      assertEquals(1, syncs.get());
      store.write(Durability.DEFERRED, 2, s -> s.connection().createStatement().executeUpdate(
          "INSERT INTO t (id) VALUES (2)"));
      store.expectOtherWriters("a test");
      assertEquals(2, syncs.get(), "the deferred write's NORMAL commit was synced before it returned");
      assertEquals(2, WalSyncTest.synchronous(store));
      insert(store, 3);
      insert(store, 4);
      assertEquals(2, syncs.get(), "later commits sync inside SQLite's commit");
      store.expectOtherWriters("again"); // cheap once done
      assertEquals("a test", store.read(null, s -> Meta.getIfPresent(s.connection(), "test_meta",
          ForeignWriters.META_NAME)));
    }
  }

  @Test
  void aStoreNobodyElseWritesKeepsSyncingOutsideItsLock() throws Exception {
    Layout layout = shared();
    Opened opened = openStore(layout);
    try {
      for (int i = 0; i < 20; i++) {
        insert(opened.store, i);
      }
      opened.store.flush();
      assertEquals(1, WalSyncTest.synchronous(opened.store));
      assertNull(opened.store.read(null, s -> Meta.getIfPresent(s.connection(), "test_meta",
          ForeignWriters.META_NAME)));
    } finally {
      opened.close();
    }
  }

  /**
   * The hazard, built by hand: the store's commit (NORMAL, not yet synced) and after it another
   * connection's commit, then a power loss that tore a frame of the store's and kept the other's.
   * SQLite's WAL checksums are cumulative: it stops at the torn frame and silently drops the intact
   * commit after it; WalCheck cannot tell a frame written by another connection from one of its
   * own, so it refuses the file as damaged under a later commit.
   */
  @Test
  void aTornFrameUnderAnotherConnectionsCommitIsRefusedAtOpen() throws Exception {
    Path live = Files.createDirectories(tmp.resolve("live"));
    Path db = live.resolve("x.db");
    SQLiteConfig config = new SQLiteConfig();
    config.setJournalMode(SQLiteConfig.JournalMode.WAL);
    SQLiteDataSource ds = new SQLiteDataSource(config);
    ds.setUrl("jdbc:sqlite:" + db);
    Path copy = Files.createDirectories(tmp.resolve("copy"));
    try (Connection store = ds.getConnection(); Connection app = ds.getConnection();
        Statement s = store.createStatement(); Statement a = app.createStatement()) {
      s.execute("PRAGMA wal_autocheckpoint=0");
      s.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)");
      s.execute("PRAGMA wal_checkpoint(TRUNCATE)");
      s.execute("INSERT INTO t VALUES (1, zeroblob(100))"); // the store's commit
      a.execute("INSERT INTO t VALUES (2, zeroblob(100))"); // the app's, after it
      Files.copy(db, copy.resolve("x.db"));
      Files.copy(live.resolve("x.db-wal"), copy.resolve("x.db-wal"));
    }
    Path wal = copy.resolve("x.db-wal");
    int frames = (int) ((Files.size(wal) - 32) / (24 + 4096));
    assertTrue(frames >= 2, "two commits, one frame or more each: " + frames);
    tearFirstFrame(wal);
    Layout layout = new Layout(copy, "x.db", "x.db", "test store", "ForeignWritersTest", false);
    JournalException refused = assertThrows(JournalException.class, () -> WalCheck.refuseDamaged("test store",
        layout));
    assertTrue(refused.getMessage().contains("committed after it would be silently dropped"), refused.getMessage());
    try (Connection c = new SQLiteDataSource().getConnection(); Statement st = c.createStatement()) {
      st.execute("ATTACH '" + copy.resolve("x.db") + "' AS x");
      try (ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM x.t")) {
        rs.next();
        assertEquals(0, rs.getInt(1), "SQLite alone drops the app's intact commit after the torn frame");
      }
    }
  }

  /** Flips a byte of the first frame's page (a power loss wrote part of it). */
  private static void tearFirstFrame(Path wal) throws IOException {
    try (FileChannel ch = FileChannel.open(wal, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      long at = 32 + 24 + 2048;
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, at);
      b.put(0, (byte) (b.get(0) ^ 0x5a)).rewind();
      ch.write(b, at);
    }
  }

  private Layout shared() throws IOException {
    Path dir = Files.createDirectories(tmp.resolve("shared"));
    return new Layout(dir, "t.db", "t.db", "test store", "ForeignWritersTest", false);
  }

  private static Connection appConnection(Layout layout) throws SQLException {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + layout.database());
    ds.setBusyTimeout(10_000);
    ds.setSynchronous("FULL");
    return ds.getConnection();
  }

  private record Opened(Store store, StoreOpener.Opened opened) {
    void close() throws Exception {
      opened.close(store, "test");
    }
  }

  private static Opened openStore(Layout layout) throws Exception {
    return new StoreOpener(SCHEMA, false, Duration.ofHours(1), Clock.systemUTC()).openEmbedded(layout,
        (name, dialect, store, version, opened) -> new Opened(store, opened));
  }

  private static void insert(Store store, int id) throws Exception {
    store.write(Durability.SYNC, id, s -> {
      PreparedStatement p = s.prepare("INSERT INTO t (id) VALUES (?)");
      p.setInt(1, id);
      return p.executeUpdate();
    });
  }

  private static int count(Connection c) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM t")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
