package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * {@code --jdbc-url jdbc:sqlite:FILE} keeps the promises {@code --dir} keeps (docs/cli.md): the
 * read-only commands write no byte, and the commands that change a journal refuse a database that
 * holds none and refuse while the app has it open. Found by a review on 2026-12-03; each test
 * failed before the fix, as its comment says.
 */
class JdbcUrlSqliteFileTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  @TempDir
  Path dir;

  /**
   * Failed before: {@code stats} opened the file read-write, and its close, the last on the file,
   * checkpointed the killed app's {@code -wal} into the database and deleted it; the app's next
   * open then refused its journal ("the -wal file ... is missing").
   */
  @Test
  void aReadOnlyCommandWritesNoByteOfAKilledAppsJournalAndTheAppReopensIt() throws Exception {
    Path live = dir.resolve("live");
    Path killed = Files.createDirectories(dir.resolve("killed"));
    try (JdbcJournal app = JdbcJournal.openEmbedded(live)) {
      for (int i = 0; i < 5; i++) {
        begin(app, "k-" + i);
      }
      // What a kill -9 leaves: every file as it is while the app runs (-wal, -shm, .open, .id).
      try (var files = Files.list(live)) {
        for (Path f : files.toList()) {
          Files.copy(f, killed.resolve(f.getFileName()));
        }
      }
    }
    assertTrue(Files.exists(killed.resolve("idem-journal.db-wal")), "the copy has the app's -wal file");
    Map<String, String> before = digests(killed);

    CliRun stats = CliRun.of("journal", "stats", "--jdbc-url", "jdbc:sqlite:" + killed.resolve("idem-journal.db"));
    CliRun list = CliRun.of("journal", "list", "--jdbc-url", "jdbc:sqlite:" + killed.resolve("idem-journal.db"));
    CliRun dryRun = CliRun.of("journal", "purge", "--jdbc-url", "jdbc:sqlite:" + killed.resolve("idem-journal.db"),
        "--older-than", "P1D");

    assertEquals(0, stats.code(), stats.err());
    assertTrue(stats.out().contains("5"), "the app's commits in its -wal are read: " + stats.out());
    assertEquals(0, list.code(), list.err());
    assertTrue(list.out().contains("k-4"), list.out());
    assertEquals(0, dryRun.code(), dryRun.err());
    assertEquals(before, digests(killed), "a read-only command changed the journal's files");
    try (JdbcJournal restarted = JdbcJournal.openEmbedded(killed)) {
      assertEquals(5, restarted.count(OperationState.PENDING), "the app reopens its journal, every begin kept");
    }
  }

  /**
   * Failed before: {@code purge --yes} opened the app's file as a single-process journal, whose
   * crash recovery took the running app's claim back to PENDING (exit 0, "purged 0").
   */
  @Test
  void aChangingCommandRefusesWhileTheAppHasTheFileOpenAndLeavesItsClaimAlone() throws Exception {
    Path db = dir.resolve("app.db");
    SQLiteConfig config = new SQLiteConfig();
    config.setJournalMode(SQLiteConfig.JournalMode.WAL);
    SQLiteDataSource appDataSource = new SQLiteDataSource(config);
    appDataSource.setUrl("jdbc:sqlite:" + db);
    OperationId id = id("k-1");
    try (JdbcJournal app = JdbcJournal.dataSource(appDataSource).closeOnShutdown(false).open()) {
      begin(app, "k-1");
      app.claim(id, "app-instance", Instant.now(), Duration.ofMinutes(5)).orElseThrow(); // sending it now
      app.flush();

      CliRun purge = CliRun.of("journal", "purge", "--jdbc-url", "jdbc:sqlite:" + db, "--older-than", "P1D", "--yes");
      CliRun redrive = CliRun.of("journal", "redrive", "--jdbc-url", "jdbc:sqlite:" + db, "--scope", "t",
          "--operation", "create-order", "--key", "k-1");

      assertEquals(OperationState.IN_FLIGHT, app.find(id).orElseThrow().state(), "the app's claim is its own");
      for (CliRun r : new CliRun[] {purge, redrive}) {
        assertEquals(1, r.code(), r.out());
        assertTrue(r.err().startsWith(IdemCli.PREFIX) && r.err().contains("open in another process"), r.err());
      }
      begin(app, "k-2"); // and the app goes on writing
    }
  }

  /** With the app stopped, the changing commands work on the file as before. */
  @Test
  void theChangingCommandsWorkOnceTheAppHasStopped() throws Exception {
    Path db = dir.resolve("app.db");
    SQLiteDataSource appDataSource = new SQLiteDataSource();
    appDataSource.setUrl("jdbc:sqlite:" + db);
    try (JdbcJournal app = JdbcJournal.dataSource(appDataSource).closeOnShutdown(false).open()) {
      fail(app, "k-old");
      fail(app, "k-redriven");
    }
    String url = "jdbc:sqlite:" + db;

    CliRun redrive = CliRun.of("journal", "redrive", "--jdbc-url", url, "--scope", "t", "--operation",
        "create-order", "--key", "k-redriven");
    CliRun purge = CliRun.of("journal", "purge", "--jdbc-url", url, "--older-than", "P1D", "--yes");

    assertEquals(0, redrive.code(), redrive.err());
    assertEquals(0, purge.code(), purge.err());
    assertTrue(purge.out().contains("purged 1 "), purge.out());
    try (JdbcJournal app = JdbcJournal.dataSource(appDataSource).closeOnShutdown(false).open()) {
      assertFalse(app.find(id("k-old")).isPresent(), "purged");
      assertEquals(OperationState.PENDING, app.find(id("k-redriven")).orElseThrow().state(), "re-driven");
    }
  }

  /**
   * Failed before: {@code purge --yes} created the journal's tables in the app's own database and
   * said "purged 0"; {@code redrive} wrote a 48 KiB journal into an empty file.
   */
  @Test
  void aChangingCommandRefusesADatabaseWithoutAJournalAndCreatesNone() throws Exception {
    Path appDb = dir.resolve("app.db");
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + appDb); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER)");
    }
    Path empty = Files.createFile(dir.resolve("typo.db"));

    CliRun purge = CliRun.of("journal", "purge", "--jdbc-url", "jdbc:sqlite:" + appDb, "--older-than", "P1D", "--yes");
    CliRun redrive = CliRun.of("journal", "redrive", "--jdbc-url", "jdbc:sqlite:" + empty, "--operation",
        "create-order", "--key", "k-1");

    assertEquals(1, purge.code(), purge.out());
    assertTrue(purge.err().startsWith(IdemCli.PREFIX), purge.err());
    assertFalse(tableExists(appDb, "idem_operation"), "no journal created in the app's database");
    assertEquals(1, redrive.code(), redrive.out());
    assertEquals(0L, Files.size(empty), "the empty file stays empty: " + redrive.err());
  }

  private static OperationId id(String key) {
    return new OperationId("t", "create-order", IdempotencyKey.of(key));
  }

  private static void begin(JdbcJournal j, String key) throws Exception {
    RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders")).build();
    j.begin(new NewOperation(id(key), null, Fingerprinter.defaults().fingerprint(snap), snap, T0));
  }

  private static void fail(JdbcJournal j, String key) throws Exception {
    begin(j, key);
    Lease lease = j.claim(id(key), "test", T0, Duration.ofMinutes(1)).orElseThrow();
    j.recordAttempt(id(key), lease, new AttemptRecord(1, lease.generation(), T0, T0.plusMillis(5),
        Classification.PERMANENT, 402, null, "HTTP 402", Duration.ZERO, "permanent: no retry"));
    j.transition(id(key), lease, Transition.finish(OperationState.FAILED, T0.plusMillis(5), null, "HTTP 402"));
  }

  private static boolean tableExists(Path db, String table) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
        ResultSet rs = c.createStatement().executeQuery(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = '" + table + "'")) {
      return rs.next();
    }
  }

  /** Every file of a directory and the SHA-256 of its bytes. */
  private static Map<String, String> digests(Path d) throws Exception {
    Map<String, String> result = new TreeMap<>();
    try (var files = Files.list(d)) {
      for (Path f : files.toList()) {
        byte[] sha = java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f));
        result.put(f.getFileName().toString(), java.util.HexFormat.of().formatHex(sha));
      }
    }
    return result;
  }
}
