package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.IdempotencyStore;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqliteStoreTest extends StoreContract {
  @TempDir
  Path dir;

  @Override
  IdempotencyStore open() {
    return JdbcIdempotencyStore.sqlite(dir.resolve("idem.db"));
  }

  @Test
  void runsInWalModeAndSurvivesAReopen() throws Exception {
    long g = claimed(ID, A, "o1", T0);
    store().complete(ID, g, "o1", T0, CREATED, T0.plus(RETENTION));
    store().close();
    store = null;
    assertEquals(CREATED, store().find(ID).orElseThrow().response().orElseThrow());
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("idem.db"));
        Statement st = c.createStatement(); ResultSet rs = st.executeQuery("PRAGMA journal_mode")) {
      rs.next();
      assertEquals("wal", rs.getString(1));
    }
  }

  /**
   * Issue 27: after a restart, a claim left in flight by the dead run answered 409 until its 30 s
   * lease ran out. Only one process writes an embedded store, so at open the store ends them all.
   */
  @Test
  void openingEndsTheLeasesThatAnEarlierRunLeftInFlight() throws Exception {
    claimed(ID, A, "o1", T0);
    store().close(); // as good as a crash here: the claim is still in flight on disk
    store = null;
    Instant restart = T0.plusSeconds(2);
    assertEquals(1, store().records(RecordQuery.stuck(), restart).records().size(), "known dead at open");
    assertEquals(2, claimed(ID, A, "o2", restart), "the retry runs at once");
  }

  @Test
  void anEmbeddedStoreBelongsToOneOpener() throws Exception {
    store();
    IdempotencyStoreException twice = assertThrows(IdempotencyStoreException.class,
        () -> JdbcIdempotencyStore.sqlite(dir.resolve("idem.db")));
    assertTrue(twice.getMessage().contains("already open"), twice.getMessage());
    store().close();
    store = null;
    store(); // the lock went with the close
  }

  /** The guard's failures name its store: a guard's user never reads of a "journal" it does not have. */
  @Test
  void failureMessagesNameTheIdempotencyStore() throws Exception {
    claimed(ID, A, "o1", T0);
    try (JdbcIdempotencyStore reader = JdbcIdempotencyStore.openReadOnly(dir.resolve("idem.db"))) {
      IdempotencyStoreException write = assertThrows(IdempotencyStoreException.class, () -> reader.purgeExpired(T0));
      assertNamesTheStore(write);
      reader.close();
      assertNamesTheStore(assertThrows(IdempotencyStoreException.class, () -> reader.find(ID)));
    }
    store().close();
    IdempotencyStore closed = store;
    store = null;
    IdempotencyStoreException e = assertThrows(IdempotencyStoreException.class, () -> closed.find(ID));
    assertNamesTheStore(e);
    assertTrue(e.getMessage().contains("is closed"), e.getMessage());
  }

  private static void assertNamesTheStore(Exception e) {
    assertTrue(e.getMessage().contains("idempotency store") && !e.getMessage().contains("journal"), e.getMessage());
  }

  @Test
  void aReadOnlyOpenListsRecordsBesideTheServingProcessAndWritesNothing() throws Exception {
    claimed(ID, A, "o1", T0);
    ((JdbcIdempotencyStore) store()).flush(); // a new claim rides on the next commit (issue 28)
    try (JdbcIdempotencyStore reader = JdbcIdempotencyStore.openReadOnly(dir.resolve("idem.db"))) {
      assertEquals(1, reader.records(RecordQuery.inFlight(), T0).records().size());
      assertEquals(1, reader.stats(T0).inFlight());
      assertThrows(IdempotencyStoreException.class, () -> reader.purgeExpired(T0.plus(RETENTION).plus(LEASE)));
    }
    assertEquals(RecordState.IN_FLIGHT, store().find(ID).orElseThrow().state(), "the reader ended no lease");
  }

  /** A database from before issue 27 (no claimed_at, no taken_over) is upgraded in place. */
  @Test
  void anOlderSchemaIsUpgradedInPlace() throws Exception {
    Path old = dir.resolve("old.db");
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + old); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE idem_server_record (caller TEXT NOT NULL, route TEXT NOT NULL, idem_key TEXT NOT NULL,"
          + " fingerprint TEXT NOT NULL, state TEXT NOT NULL, generation BIGINT NOT NULL, owner TEXT NOT NULL,"
          + " lease_until BIGINT NOT NULL, expires_at BIGINT NOT NULL, status INTEGER, headers TEXT, body BLOB,"
          + " body_omitted INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (caller, route, idem_key))");
      st.execute("INSERT INTO idem_server_record VALUES ('alice', 'POST /orders', 'k1', '" + "a".repeat(64)
          + "', 'COMPLETED', 1, 'o1', 0, " + T0.plus(RETENTION).toEpochMilli() + ", 201, '', x'7b7d', 0)");
    }
    try (JdbcIdempotencyStore s = JdbcIdempotencyStore.sqlite(old)) {
      assertEquals(RecordState.COMPLETED, s.find(ID).orElseThrow().state());
      RecordSummary r = s.records(RecordQuery.all(), T0).records().get(0);
      assertEquals(Instant.EPOCH, r.claimedAt(), "unknown for an older row");
      assertEquals(1, claimed2(s));
    }
  }

  /**
   * Issue 26: the guard's SQLite files took the process umask (rw-r--r-- by default), so every
   * local user could read the stored responses. Now they are the owner's only, like the journal's.
   */
  @Test
  void theDatabaseAndItsCompanionFilesAreTheOwnersOnly() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(dir.getFileSystem().supportedFileAttributeViews().contains("posix"));
    long g = claimed(ID, A, "o1", T0);
    store().complete(ID, g, "o1", T0, CREATED, T0.plus(RETENTION));
    int checked = 0;
    for (String name : java.util.List.of("idem.db", "idem.db-wal", "idem.db-shm", "idem.db.lock", "idem.db.id")) {
      Path f = dir.resolve(name);
      if (java.nio.file.Files.exists(f)) {
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
            java.nio.file.Files.getPosixFilePermissions(f)), name);
        checked++;
      }
    }
    assertTrue(checked >= 3, "the database, its -wal and its lock at least");
  }

  /**
   * Issue 26: the guard's store opened a damaged database without a word (it only touched the
   * pages its first statements read), and answered from it until a query hit the damage. Now
   * SQLite's integrity check runs at open, and a damaged file is refused with what to do.
   */
  @Test
  void aDamagedIndexIsRefusedAtOpen() throws Exception {
    long g = claimed(ID, A, "o1", T0);
    store().complete(ID, g, "o1", T0, CREATED, T0.plus(RETENTION));
    store().close();
    store = null;
    Path db = dir.resolve("idem.db");
    int page;
    int pageSize;
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement st = c.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT rootpage FROM sqlite_master WHERE name = 'idem_server_record_expires'")) {
        rs.next();
        page = rs.getInt(1);
      }
      try (ResultSet rs = st.executeQuery("PRAGMA page_size")) {
        rs.next();
        pageSize = rs.getInt(1);
      }
    }
    assertTrue(java.nio.file.Files.notExists(dir.resolve("idem.db-wal")), "closed cleanly: all in the database file");
    try (var ch = java.nio.channels.FileChannel.open(db, java.nio.file.StandardOpenOption.WRITE)) {
      byte[] junk = new byte[pageSize];
      java.util.Arrays.fill(junk, (byte) 0x5a);
      ch.write(java.nio.ByteBuffer.wrap(junk), (long) (page - 1) * pageSize);
    }
    IdempotencyStoreException e = assertThrows(IdempotencyStoreException.class,
        () -> JdbcIdempotencyStore.sqlite(db));
    assertTrue(e.getMessage().contains("is corrupt"), e.getMessage());
  }

  /**
   * Issue 26: the schema is now versioned. A file made by the last unversioned code (claimed_at and
   * taken_over present, no version table) is adopted as version 2, not migrated again (SQLite cannot
   * add a column only if it is missing, so running the migrations on it would fail).
   */
  @Test
  void aFileFromTheLastUnversionedCodeIsAdoptedAsItIs() throws Exception {
    Path old = dir.resolve("adopted.db");
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + old); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS idem_server_record (caller TEXT NOT NULL, route TEXT NOT NULL,"
          + " idem_key TEXT NOT NULL, fingerprint TEXT NOT NULL, state TEXT NOT NULL, generation BIGINT NOT NULL,"
          + " owner TEXT NOT NULL, lease_until BIGINT NOT NULL, expires_at BIGINT NOT NULL, status INTEGER,"
          + " headers TEXT, body BLOB, body_omitted INTEGER NOT NULL DEFAULT 0,"
          + " claimed_at BIGINT NOT NULL DEFAULT 0, taken_over INTEGER NOT NULL DEFAULT 0,"
          + " PRIMARY KEY (caller, route, idem_key))");
      st.execute("CREATE INDEX IF NOT EXISTS idem_server_record_expires ON idem_server_record (expires_at)");
      st.execute("CREATE INDEX IF NOT EXISTS idem_server_record_state ON idem_server_record (state, claimed_at)");
      st.execute("INSERT INTO idem_server_record VALUES ('alice', 'POST /orders', 'k1', '" + "a".repeat(64)
          + "', 'COMPLETED', 1, 'o1', 0, " + T0.plus(RETENTION).toEpochMilli() + ", 201, '', x'7b7d', 0, "
          + T0.toEpochMilli() + ", 0)");
    }
    try (JdbcIdempotencyStore s = JdbcIdempotencyStore.sqlite(old)) {
      assertEquals(RecordState.COMPLETED, s.find(ID).orElseThrow().state());
      assertEquals(T0, s.records(RecordQuery.all(), T0).records().get(0).claimedAt());
      assertEquals(1, claimed2(s));
    }
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + old); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*), MAX(version) FROM idem_server_schema_version")) {
      rs.next();
      assertEquals(3, rs.getInt(1), "versions 1 and 2 adopted, 3 run");
      assertEquals(3, rs.getInt(2));
    }
  }

  private static long claimed2(JdbcIdempotencyStore s) {
    return ((ClaimAttempt.Claimed) s.claim(new RecordId("alice", "POST /orders", "k2"), A, "o2", T0,
        T0.plus(LEASE), T0.plus(RETENTION))).generation();
  }
}
