package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.JournalException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.FaultyDataSource;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The write-ahead log in front of an embedded H2 journal: what is only in the log after a crash
 * reaches the database at the next open, a failed database write loses nothing, and the log is
 * restarted once the database has everything.
 */
class LoggedStoreTest {
  @TempDir
  Path tmp;
  private final Random random = new Random(7);

  private Path dir() throws Exception {
    return H2Files.prepare(tmp.resolve("journal"));
  }

  private OperationId id() {
    return new OperationId("tenant-a", "create-order", IdempotencyKey.generate(random));
  }

  private static RawRow pendingRow(OperationId id, String body) {
    String request = "{\"v\":1,\"method\":\"POST\",\"uri\":\"https://api.example.test/v1/orders\",\"headers\":{},"
        + "\"contentType\":\"application/json\",\"body\":\"" + java.util.Base64.getEncoder().encodeToString(
            body.getBytes(java.nio.charset.StandardCharsets.UTF_8)) + "\"}";
    return new RawRow(id.scope(), id.operation(), id.key().value(), "cart-1", "a".repeat(64), request, "PENDING",
        null, 0, null, null, 1_000, 1_000, "[]", null, null, null, null);
  }

  /** Counts rows of {@code idem_operation} straight from the H2 file, with no journal open. */
  private static int rowsInDatabase(Path dir) throws Exception {
    try (Connection c = DriverManager.getConnection(H2Files.url(dir));
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM idem_operation")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  @Test
  void rowsThatOnlyTheLogHasReachTheDatabaseAtTheNextOpenAndTheLogStartsOver() throws Exception {
    Path dir = dir();
    JdbcJournal.openH2(dir).close(); // the schema
    // The state a crash leaves: records forced to the log, never applied to H2.
    List<OperationId> ids = List.of(id(), id(), id());
    try (WriteAheadLog log = WriteAheadLog.open(dir.resolve(H2Files.LOG_FILE), WriteAheadLog.Forcer.FDATASYNC)) {
      long last = 0;
      for (OperationId id : ids) {
        RawRow row = pendingRow(id, "{\"n\":1}");
        last = log.append(OperationTable.RowKey.of(id), () -> RowImage.encode(row));
      }
      log.awaitDurable(last);
    }
    assertEquals(0, rowsInDatabase(dir), "the database lacks them: only the log can bring them back");

    try (JdbcJournal journal = JdbcJournal.openH2(dir)) {
      for (OperationId id : ids) {
        OperationRecord r = journal.find(id).orElse(null);
        assertNotNull(r, id + " was lost");
        assertEquals(OperationState.PENDING, r.state());
        assertEquals("{\"n\":1}", new String(r.request().body(), java.nio.charset.StandardCharsets.UTF_8));
      }
      assertEquals(3, journal.findDue(java.time.Instant.EPOCH.plusSeconds(1), null, 10).size());
      assertEquals(3, journal.findByReference("tenant-a", "cart-1").size());
    }
    assertEquals(3, rowsInDatabase(dir));
    try (WriteAheadLog log = WriteAheadLog.open(dir.resolve(H2Files.LOG_FILE), WriteAheadLog.Forcer.FDATASYNC)) {
      assertTrue(log.recovered().isEmpty(), "the log was restarted once H2 had everything");
    }
  }

  @Test
  void aKeyBegunBeforeAReopenIsKnownAfterItAndNotBegunAgain() throws Exception {
    Path dir = dir();
    dev.idem.core.NewOperation op = dev.idem.jdbc.support.Ops.op(id(), "{\"n\":1}");
    try (JdbcJournal journal = JdbcJournal.openH2(dir)) {
      assertTrue(journal.begin(op).created());
    }
    try (JdbcJournal journal = JdbcJournal.openH2(dir)) {
      // The key filter is loaded from H2 at open: a begin of a known key must find it, not create it.
      assertFalse(journal.begin(op).created());
      dev.idem.core.NewOperation sameKeyOtherBody = dev.idem.jdbc.support.Ops.op(op.id(), "{\"n\":2}");
      assertThrows(dev.idem.core.IdempotencyKeyReusedException.class, () -> journal.begin(sameKeyOtherBody));
    }
  }

  @Test
  void anInterruptedCallerDoesNotBreakTheJournalForOthers() throws Exception {
    Path dir = dir();
    dev.idem.core.NewOperation first = dev.idem.jdbc.support.Ops.op(id(), "{\"n\":1}");
    dev.idem.core.NewOperation second = dev.idem.jdbc.support.Ops.op(id(), "{\"n\":2}");
    try (JdbcJournal journal = JdbcJournal.openH2(dir)) {
      journal.begin(second);
      journal.flush();
      journal.findByState(OperationState.PENDING, null, 10); // H2 now has it: later reads of it go to H2
      Thread.currentThread().interrupt(); // an app thread cancelled during its begin
      try {
        assertTrue(journal.begin(first).created());
        assertTrue(journal.find(second.id()).isPresent());
      } finally {
        assertTrue(Thread.interrupted(), "the interrupt is kept for the caller");
      }
      dev.idem.core.NewOperation third = dev.idem.jdbc.support.Ops.op(id(), "{\"n\":3}");
      assertTrue(journal.begin(third).created(), "the journal still works for everyone else");
    }
    try (JdbcJournal journal = JdbcJournal.openH2(dir)) {
      assertTrue(journal.find(first.id()).isPresent(), "the interrupted caller's begin was durable");
    }
  }

  @Test
  void aLoggedRowTooWideForItsColumnsDoesNotKeepTheJournalFromOpening() throws Exception {
    Path dir = dir();
    JdbcJournal.openH2(dir).close();
    OperationId good = id();
    OperationId bad = id();
    RawRow tooWide = pendingRow(bad, "{}");
    RawRow wideOwner = new RawRow(tooWide.scope(), tooWide.operation(), tooWide.key(), null, tooWide.fingerprint(),
        tooWide.requestJson(), "IN_FLIGHT", "o".repeat(300), 1, 5L, null, 1, 2, "[]", null, null, null, null);
    // A log written before the column checks existed: a row H2 refuses, next to one it takes.
    try (WriteAheadLog log = WriteAheadLog.open(dir.resolve(H2Files.LOG_FILE), WriteAheadLog.Forcer.FDATASYNC)) {
      RawRow fine = pendingRow(good, "{}");
      log.append(OperationTable.RowKey.of(good), () -> RowImage.encode(fine));
      log.awaitDurable(log.append(OperationTable.RowKey.of(bad), () -> RowImage.encode(wideOwner)));
    }
    try (JdbcJournal journal = JdbcJournal.openH2(dir)) {
      assertTrue(journal.find(good).isPresent(), "the row that fits was replayed");
      assertTrue(journal.find(bad).isEmpty(), "the row that cannot fit is left out and reported");
    }
  }

  @Test
  void aFailedWriteToTheDatabaseFailsFastAndLosesNothing() throws Exception {
    Path dir = dir();
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL(H2Files.url(dir));
    FaultyDataSource faulty = new FaultyDataSource(h2);
    LoggedStore store = StoreFixture.open(faulty, dir, LoggedStore.CHECKPOINT_BYTES, WriteAheadLog.Forcer.NONE);
    OperationTable table = store.table(Dialect.H2);
    List<OperationId> ids = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      OperationId id = id();
      ids.add(id);
      StoreFixture.begin(store, id, pendingRow(id, "{}").requestJson());
    }

    faulty.failCommits = true; // the disk fills up under H2
    JournalException first = assertThrows(JournalException.class,
        () -> store.read(null, c -> table.inState(c, OperationState.PENDING, null, 10)));
    assertTrue(first.getMessage().contains("logged rows"), first.getMessage());
    OperationId another = id();
    JournalException next = assertThrows(JournalException.class, () -> StoreFixture.begin(store, another, "{}"));
    assertTrue(next.getMessage().contains("unusable"), next.getMessage());
    faulty.failCommits = false;
    store.close(); // the failure was reported already; close releases the files without applying anything

    try (JdbcJournal journal = JdbcJournal.openH2(dir)) {
      for (OperationId id : ids) {
        assertTrue(journal.find(id).isPresent(), id + " was lost with the failed database write");
      }
      assertTrue(journal.find(another).isEmpty(), "a begin that failed must not come back");
    }
  }

  @Test
  void aCycleLongerThanTheCheckpointSizeIsCheckpointedAndTheLogStartsOverAtItsFront() throws Exception {
    Path dir = dir();
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL(H2Files.url(dir));
    Path logFile = dir.resolve(H2Files.LOG_FILE);
    LoggedStore store = StoreFixture.open(h2, dir, 64 * 1024, WriteAheadLog.Forcer.NONE);
    OperationTable table = store.table(Dialect.H2);
    List<OperationId> ids = new ArrayList<>();
    try {
      for (int i = 0; i < 300; i++) { // about 150 KB of records: more than two cycles' worth
        OperationId id = id();
        ids.add(id);
        StoreFixture.begin(store, id, pendingRow(id, "{\"padding\":\"" + "x".repeat(300) + "\"}").requestJson());
      }
      // The applier applies what is older than its batching delay, then sees the cycle is full.
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (currentCycleStart(logFile) == 1) {
        assertTrue(System.nanoTime() < deadline, "the applier never checkpointed the full cycle");
        Thread.onSpinWait();
      }
      assertTrue(rowsInStore(store, table) == 300);
    } finally {
      store.close();
    }
    assertEquals(300, rowsInDatabase(dir));
  }

  private static int rowsInStore(LoggedStore store, OperationTable table) throws Exception {
    return store.read(null, c -> table.inState(c, OperationState.PENDING, null, 1000)).size();
  }

  /** The start LSN of the log's current cycle, read from its two header slots. */
  private static long currentCycleStart(Path logFile) throws Exception {
    try (FileChannel ch = FileChannel.open(logFile, StandardOpenOption.READ)) {
      long best = 0;
      for (int slot = 0; slot < 2; slot++) {
        ByteBuffer b = ByteBuffer.allocate(16);
        ch.read(b, (long) slot * WriteAheadLog.SLOT);
        best = Math.max(best, b.getLong(8));
      }
      return best;
    }
  }
}
