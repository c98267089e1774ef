package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.server.JdbcIdempotencyStore;
import java.net.URI;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * Inputs an operator gives the CLI that are valid, or plainly bad usage, and get a misleading
 * answer.
 *
 * <p>Found by a review on 2026-12-04.
 */
class ReviewCliInputTest {
  @TempDir
  Path dir;

  /**
   * sqlite-jdbc takes a URI file name ({@code jdbc:sqlite:file:/abs/app.db}, the form that carries
   * options such as {@code ?cache=shared}), and Idem's own {@code StoreOpener.sqliteFileOf} reads
   * it as the file {@code /abs/app.db}. The CLI takes everything after {@code jdbc:sqlite:} as a
   * path, looks for a file literally named {@code file:/abs/app.db}, and tells the operator that
   * the app's journal "does not exist" while it is right there: an operator who copied the app's
   * URL is sent looking for a missing file.
   */
  @Test
  void aSqliteUriFileNameIsReadAsTheFileItNames() throws Exception {
    Path db = dir.resolve("app.db");
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + db);
    try (JdbcJournal app = JdbcJournal.dataSource(ds).closeOnShutdown(false).open()) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders")).build();
      app.begin(new NewOperation(new OperationId("t", "create-order", IdempotencyKey.of("k-1")), null,
          Fingerprinter.defaults().fingerprint(snap), snap, Instant.parse("2026-01-01T00:00:00Z")));
    }

    CliRun stats = CliRun.of("journal", "stats", "--jdbc-url", "jdbc:sqlite:" + db.toUri());

    assertEquals(0, stats.code(), "the app's own URL (" + "jdbc:sqlite:" + db.toUri() + ") was refused: " + stats.err());
    assertTrue(stats.out().contains("PENDING    1"), stats.out());
  }

  /**
   * {@code journal purge} refuses an age before 1970 as bad usage (exit 2, test
   * {@code purgeRefusesAnAgeBeforeTheEpochAsBadUsage}); {@code guard list --older-than} takes any
   * duration, and one too long for the store's epoch milliseconds ends in the arithmetic's own
   * message: "idem: long overflow", exit 1, "an error with the store", which says nothing about the
   * option the operator mistyped.
   */
  @Test
  void anOlderThanTooLongForTheStoreIsBadUsageNamingTheOption() {
    Path db = dir.resolve("guard.db");
    JdbcIdempotencyStore.sqlite(db).close();

    CliRun r = CliRun.of("guard", "list", "--store", db.toString(), "--older-than", "P200000000000D");

    assertEquals(2, r.code(), "exit " + r.code() + ": " + r.err());
    assertTrue(r.err().contains("--older-than"), r.err());
    assertFalse(r.err().contains("long overflow"), r.err());
  }
}
