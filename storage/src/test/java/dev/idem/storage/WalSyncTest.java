package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * An embedded store whose files are its own commits with {@code synchronous=NORMAL} and syncs its
 * {@code -wal} file after each group commit, outside the statement lock ({@link DiskSync#ofWal}):
 * a durable write still returns only after a sync that began after its commit, and the next
 * group's statements run while that sync is under way. A store over a file the app's connections
 * may share does too, until another writer shows up ({@link ForeignWritersTest}).
 */
class WalSyncTest {
  /**
   * The tests' own threads: on a 2-core machine the common pool has one thread, and from Java 21 on
   * its async tasks queue on it, so a task that waits for another would wait for ever.
   */
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopPool() {
    pool.shutdownNow();
  }

  private static final Schema SCHEMA = new Schema("test store", WalSyncTest.class, "dev/idem/storage/testschema/",
      "test_version", "test_meta", Schema.Adoption.NONE);

  @TempDir
  Path tmp;

  @Test
  void ownFilesCommitWithoutSyncAndSyncTheWalOutsideTheLock() throws Exception {
    Layout own = new Layout(tmp.resolve("own"), "t.db", "t", "test store", "WalSyncTest", true);
    try (Store store = open(own)) {
      assertEquals(1, synchronous(store), "NORMAL: the store syncs the -wal file itself");
      assertTrue(Files.exists(own.directory().resolve("t.db-wal")));
    }
  }

  @Test
  void aFileOthersMayShareSyncsOutsideTheLockWhileNobodyElseWritesIt() throws Exception {
    Files.createDirectories(tmp.resolve("shared"));
    Layout shared = new Layout(tmp.resolve("shared"), "t.db", "t.db", "test store", "WalSyncTest", false);
    try (Store store = open(shared)) {
      assertEquals(1, synchronous(store), "NORMAL until another writer shows up (ForeignWritersTest)");
    }
  }

  @Test
  void aDurableWriteWaitsForTheSyncAfterItsCommitWhileOthersStatementsRunDuringIt() throws Exception {
    Path db = tmp.resolve("p.db");
    SQLiteConfig config = new SQLiteConfig();
    config.setJournalMode(SQLiteConfig.JournalMode.WAL);
    SQLiteDataSource ds = new SQLiteDataSource(config);
    ds.setUrl("jdbc:sqlite:" + db);
    Connection c = ds.getConnection();
    try (Statement st = c.createStatement()) {
      st.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)");
      st.execute("PRAGMA synchronous=NORMAL");
    }
    DiskSync wal = DiskSync.ofWal(tmp.resolve("p.db-wal"));
    CountDownLatch firstSyncStarted = new CountDownLatch(1);
    CountDownLatch releaseFirstSync = new CountDownLatch(1);
    AtomicInteger syncs = new AtomicInteger();
    DiskSync gated = new DiskSync() {
      @Override
      public void sync() throws java.sql.SQLException, java.io.IOException {
        if (syncs.incrementAndGet() == 1) {
          firstSyncStarted.countDown();
          try {
            assertTrue(releaseFirstSync.await(10, TimeUnit.SECONDS));
          } catch (InterruptedException e) {
            throw new java.io.InterruptedIOException();
          }
        }
        wal.sync();
      }

      @Override
      public void close() throws java.sql.SQLException, java.io.IOException {
        wal.close();
      }
    };
    try (SingleConnectionStore store = new SingleConnectionStore("test store", "p", c, gated, Duration.ofHours(1),
        false)) {
      CompletableFuture<Integer> first = CompletableFuture.supplyAsync(() -> insert(store, 1, null), pool);
      assertTrue(firstSyncStarted.await(10, TimeUnit.SECONDS));
      // The first group's sync is under way: another write's statement runs now, not after it.
      CountDownLatch secondRan = new CountDownLatch(1);
      CompletableFuture<Integer> second = CompletableFuture.supplyAsync(() -> insert(store, 2, secondRan), pool);
      assertTrue(secondRan.await(10, TimeUnit.SECONDS), "a statement waited for another group's disk sync");
      assertFalse(first.isDone(), "no durable write returns before the sync that covers it");
      assertFalse(second.isDone());
      releaseFirstSync.countDown();
      assertEquals(1, first.get(10, TimeUnit.SECONDS));
      assertEquals(1, second.get(10, TimeUnit.SECONDS));
      assertEquals(2, syncs.get(), "the second write was committed after the first sync began, so it waited for"
          + " a sync of its own");
    }
  }

  private static int insert(Store store, int id, CountDownLatch ran) {
    try {
      return store.write(Durability.SYNC, id, s -> {
        PreparedStatement p = s.prepare("INSERT INTO t (id) VALUES (?)");
        p.setInt(1, id);
        int n = p.executeUpdate();
        if (ran != null) {
          ran.countDown();
        }
        return n;
      });
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static Store open(Layout layout) throws Exception {
    return new StoreOpener(SCHEMA, false, Duration.ofHours(1), Clock.systemUTC()).openEmbedded(layout,
        (name, dialect, store, version, opened) -> store);
  }

  static int synchronous(Store store) throws Exception {
    return store.read(null, s -> {
      try (Statement st = s.connection().createStatement(); ResultSet rs = st.executeQuery("PRAGMA synchronous")) {
        rs.next();
        return rs.getInt(1);
      }
    });
  }
}
