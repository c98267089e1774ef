package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.JdbcJournal;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.webhooks.WebhookInbox;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * An operator runs the CLI they have at hand on a store that an upgraded app (a newer Idem) has
 * already migrated. Every read-only command, and the check the changing commands make first,
 * answers with the advice for an OLDER store: "open the journal once with this Idem version (which
 * migrates it)". Followed, it sends the operator to open the store with the old version, which
 * cannot migrate a schema down (the app's own open says "newer than this Idem version supports;
 * upgrade Idem to open it"). The message must say the store is newer and that the CLI needs
 * upgrading.
 *
 * <p>Found by a review on 2026-12-06.
 */
class ReviewNewerSchemaTest {
  @TempDir
  Path dir;

  @Test
  void aJournalWrittenByANewerIdemIsNamedAsNewerWithTheAdviceToUpgradeTheCli() throws Exception {
    Path journal = dir.resolve("journal");
    JdbcJournal.openEmbedded(journal).close();
    bumpSchema(journal.resolve("idem-journal.db"), "idem_schema_version");

    CliRun stats = CliRun.of("journal", "stats", "--dir", journal.toString());
    CliRun purge = CliRun.of("journal", "purge", "--dir", journal.toString(), "--older-than", "P1D", "--yes");

    assertAll(() -> assertNewerAdvice(stats), () -> assertNewerAdvice(purge));
  }

  @Test
  void anInboxAndAGuardStoreWrittenByANewerIdemAreNamedAsNewerToo() throws Exception {
    Path inbox = dir.resolve("inbox");
    WebhookInbox.sqlite(inbox).open().close();
    bumpSchema(inbox.resolve("inbox.db"), "idem_webhook_schema_version");
    Path store = dir.resolve("guard.db");
    JdbcIdempotencyStore.sqlite(store).close();
    bumpSchema(store, "idem_server_schema_version");

    CliRun webhooks = CliRun.of("webhooks", "stats", "--inbox", inbox.toString());
    CliRun guard = CliRun.of("guard", "stats", "--store", store.toString());

    assertAll(() -> assertNewerAdvice(webhooks), () -> assertNewerAdvice(guard));
  }

  private static void assertNewerAdvice(CliRun r) {
    assertEquals(1, r.code(), r.out());
    assertFalse(r.err().contains("which migrates it"),
        "a newer schema cannot be migrated by opening it with this (older) version: " + r.err());
    assertTrue(r.err().contains("newer"), "the line should say the store is newer than this CLI (upgrade the CLI): "
        + r.err());
  }

  /** Records one more migration than this Idem knows, as a newer Idem's open would. */
  private static void bumpSchema(Path db, String versionTable) throws Exception {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + db);
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("INSERT INTO " + versionTable + " (version, description, applied_at)"
          + " SELECT MAX(version) + 1, 'a newer idem', 0 FROM " + versionTable);
    }
  }
}
