package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.JournalException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.file.Path;
import java.time.Instant;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * Issue 26: {@code list --jdbc-url} opened the journal as its app does (migration, recovery, a
 * connection per read), so its count and its pages were separate reads and disagreed while the app
 * wrote ("50869 of 39056 shown"). It now opens read-only, every read one snapshot, as {@code --dir}
 * does. The PostgreSQL test failed before (its page read after the app's write listed 3 of a
 * count of 2; checked with the JournalOptions of the commit before); the SQLite one passed before
 * too (one connection left in its read transaction), and stays as the same check on that path.
 */
@ExtendWith(PostgresExtension.class)
class JdbcUrlSnapshotTest {
  @TempDir
  Path dir;

  @Test
  void aCountAndItsPagesAreOneSnapshotWhileTheAppWrites() throws Exception {
    Path db = dir.resolve("app.db");
    SQLiteConfig config = new SQLiteConfig();
    config.setJournalMode(SQLiteConfig.JournalMode.WAL);
    SQLiteDataSource appDataSource = new SQLiteDataSource(config);
    appDataSource.setUrl("jdbc:sqlite:" + db);
    try (JdbcJournal app = JdbcJournal.dataSource(appDataSource).closeOnShutdown(false).open()) {
      begin(app, "k-1");
      begin(app, "k-2");
      JournalOptions options = new JournalOptions();
      options.location = new JournalOptions.Location();
      options.location.jdbcUrl = "jdbc:sqlite:" + db;
      try (JdbcJournal cli = options.openReadOnly()) {
        assertEquals(2, cli.count(OperationState.PENDING));
        begin(app, "k-3"); // the app writes between the command's count and its pages
        assertEquals(2, cli.findByState(OperationState.PENDING, null, 500).size());
        assertEquals(2, cli.count(OperationState.PENDING));
        assertThrows(JournalException.class, () -> begin(cli, "k-4"), "a read-only open writes nothing");
      }
      try (JdbcJournal next = options.openReadOnly()) {
        assertEquals(3, next.count(OperationState.PENDING), "a new command sees the app's latest commits");
      }
    }
  }

  @Test
  void onPostgresToo(PgDatabase pg) throws Exception {
    PGSimpleDataSource ds = pg.dataSource();
    try (JdbcJournal app = JdbcJournal.dataSource(ds).closeOnShutdown(false).open()) {
      begin(app, "k-1");
      begin(app, "k-2");
      JournalOptions options = new JournalOptions();
      options.location = new JournalOptions.Location();
      options.location.jdbcUrl = ds.getUrl();
      options.user = ds.getUser();
      options.password = ds.getPassword();
      try (JdbcJournal cli = options.openReadOnly()) {
        assertEquals(2, cli.count(OperationState.PENDING));
        begin(app, "k-3"); // the app writes between the command's count and its pages
        assertEquals(2, cli.findByState(OperationState.PENDING, null, 500).size());
        assertEquals(2, cli.count(OperationState.PENDING));
        assertThrows(JournalException.class, () -> begin(cli, "k-4"), "a read-only open writes nothing");
      }
      try (JdbcJournal next = options.openReadOnly()) {
        assertEquals(3, next.count(OperationState.PENDING), "a new command sees the app's latest commits");
      }
    }
  }

  @Test
  void onAnAppsH2Database() throws Exception {
    String url = "jdbc:h2:" + dir.resolve("app");
    org.h2.jdbcx.JdbcDataSource ds = new org.h2.jdbcx.JdbcDataSource();
    ds.setURL(url);
    try (JdbcJournal app = JdbcJournal.dataSource(ds).closeOnShutdown(false).open()) {
      begin(app, "k-1");
      begin(app, "k-2");
      JournalOptions options = new JournalOptions();
      options.location = new JournalOptions.Location();
      options.location.jdbcUrl = url;
      try (JdbcJournal cli = options.openReadOnly()) {
        assertEquals(2, cli.count(OperationState.PENDING));
        begin(app, "k-3");
        assertEquals(2, cli.findByState(OperationState.PENDING, null, 500).size());
        assertEquals(2, cli.count(OperationState.PENDING));
      }
      try (JdbcJournal next = options.openReadOnly()) {
        assertEquals(3, next.count(OperationState.PENDING));
      }
    }
  }

  private static void begin(JdbcJournal j, String key) throws Exception {
    RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders")).build();
    j.begin(new NewOperation(new OperationId("t", "create-order", IdempotencyKey.of(key)), null,
        Fingerprinter.defaults().fingerprint(snap), snap, Instant.parse("2026-01-01T00:00:00Z")));
  }
}
