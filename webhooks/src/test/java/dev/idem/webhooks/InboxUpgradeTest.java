package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: the inbox's tables had no upgrade path (CREATE TABLE IF NOT EXISTS at every open). They
 * now have versioned migrations; an inbox created by the old code, with no version table, no id
 * file and no meta table, opens as it is, keeps its events, and is versioned from then on.
 */
class InboxUpgradeTest {
  @TempDir
  Path dir;

  @Test
  void anInboxCreatedBeforeVersionedMigrationsOpensWithItsEvents() throws Exception {
    Files.createDirectories(dir);
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("inbox.db"));
        Statement st = c.createStatement()) {
      st.execute("PRAGMA journal_mode=WAL");
      // The DDL of the old Dialect.schema(), as it ran at every open.
      st.execute("CREATE TABLE IF NOT EXISTS idem_webhook_inbox ( source VARCHAR(64) NOT NULL, event_id VARCHAR(255)"
          + " NOT NULL, event_type VARCHAR(255) NOT NULL, signature_digest BLOB NOT NULL, body BLOB NOT NULL,"
          + " signed_at INTEGER, received_at INTEGER NOT NULL, state VARCHAR(16) NOT NULL, attempts INTEGER NOT NULL"
          + " DEFAULT 0, runs INTEGER NOT NULL DEFAULT 0, next_attempt_at INTEGER NOT NULL, first_attempt_at INTEGER,"
          + " last_delay_ms INTEGER NOT NULL DEFAULT 0, lease_owner VARCHAR(128), lease_until INTEGER,"
          + " lease_generation INTEGER NOT NULL DEFAULT 0, last_error VARCHAR(1000), finished_at INTEGER,"
          + " PRIMARY KEY (source, event_id))");
      st.execute("CREATE UNIQUE INDEX IF NOT EXISTS idem_webhook_inbox_signature ON idem_webhook_inbox (source,"
          + " signature_digest)");
      st.execute("CREATE INDEX IF NOT EXISTS idem_webhook_inbox_due ON idem_webhook_inbox (state, next_attempt_at)");
      st.execute("CREATE TABLE IF NOT EXISTS idem_webhook_attempts ( source VARCHAR(64) NOT NULL, event_id"
          + " VARCHAR(255) NOT NULL, run INTEGER NOT NULL, owner VARCHAR(128) NOT NULL, started_at INTEGER NOT NULL,"
          + " ended_at INTEGER, outcome VARCHAR(16), error VARCHAR(1000), decision VARCHAR(300),"
          + " PRIMARY KEY (source, event_id, run))");
      st.execute("INSERT INTO idem_webhook_inbox (source, event_id, event_type, signature_digest, body, received_at,"
          + " state, next_attempt_at) VALUES ('acme', 'evt_old', 'order.paid', x'01', x'7b7d', 1000, 'PENDING', 1000)");
    }
    Files.writeString(dir.resolve("inbox.lock"), "");

    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      assertEquals(InboxState.PENDING, inbox.find("acme", "evt_old").orElseThrow().state(), "the old event is kept");
      VerifiedWebhook again = new VerifiedWebhook("acme", "evt_old", "order.paid", null, Instant.ofEpochMilli(2000),
          "{}".getBytes(StandardCharsets.UTF_8), new byte[] {2});
      assertEquals(AcceptResult.DUPLICATE, inbox.accept(again), "and still deduplicates");
      VerifiedWebhook fresh = new VerifiedWebhook("acme", "evt_new", "order.paid", null, Instant.ofEpochMilli(2000),
          "{}".getBytes(StandardCharsets.UTF_8), new byte[] {3});
      assertEquals(AcceptResult.ACCEPTED, inbox.accept(fresh));
      // Its payload has no checksum (the column came later): handed over as before, not quarantined.
      java.util.List<String> handled = new java.util.ArrayList<>();
      WebhookProcessor.builder(inbox).owner("t").defaultHandler(e -> handled.add(e.eventId() + " "
          + new String(e.body(), StandardCharsets.UTF_8))).build().processDue(10);
      assertEquals(java.util.List.of("evt_old {}", "evt_new {}"), handled);
    }
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("inbox.db"));
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT MAX(version) FROM idem_webhook_schema_version")) {
      rs.next();
      assertEquals(5, rs.getInt(1), "versioned from now on");
    }
    assertTrue(Files.exists(dir.resolve("inbox.id")), "and it has an id, so a swapped database is refused");
    try (WebhookInbox reader = WebhookInbox.openReadOnly(dir)) {
      assertEquals(2, reader.counts().get(InboxState.DONE));
    }
  }
}
