package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: the inbox's own opener took whatever file it found. A deleted {@code inbox.db} became a
 * new, empty inbox (every accepted event forgotten, so a redelivery of one was processed again), and
 * a damaged file opened without a word. On the journal's storage layer the inbox has an id file
 * and SQLite's integrity check at open: both are refused, with what to do. Both tests failed on the
 * old opener (checked by running them against the commit before the port): the deleted database
 * was replaced by an empty one; the damaged index failed the open only by chance (the lease reset
 * at open read that index), with SQLite's bare "malformed" and no word on what to do.
 */
class InboxDamageTest {
  @TempDir
  Path dir;

  @Test
  void aDeletedDatabaseIsRefusedNotReplacedByAnEmptyOne() throws Exception {
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      assertEquals(AcceptResult.ACCEPTED, inbox.accept(event("evt_1", 1)));
    }
    Files.delete(dir.resolve("inbox.db"));

    WebhookInboxException e = assertThrows(WebhookInboxException.class, () -> WebhookInbox.sqlite(dir).open());
    assertTrue(e.getMessage().contains("is missing") && e.getMessage().contains("inbox.id"), e.getMessage());
    assertFalse(Files.exists(dir.resolve("inbox.db")), "no empty inbox was put in its place");
  }

  @Test
  void aDamagedIndexIsRefusedAtOpen() throws Exception {
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      for (int i = 0; i < 20; i++) {
        assertEquals(AcceptResult.ACCEPTED, inbox.accept(event("evt_" + i, i)));
      }
    }
    Path db = dir.resolve("inbox.db");
    int page;
    int pageSize;
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement st = c.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT rootpage FROM sqlite_master WHERE name = 'idem_webhook_inbox_due'")) {
        rs.next();
        page = rs.getInt(1);
      }
      try (ResultSet rs = st.executeQuery("PRAGMA page_size")) {
        rs.next();
        pageSize = rs.getInt(1);
      }
    }
    assertFalse(Files.exists(dir.resolve("inbox.db-wal")), "closed cleanly: everything is in the database file");
    try (FileChannel ch = FileChannel.open(db, StandardOpenOption.WRITE)) {
      byte[] junk = new byte[pageSize];
      Arrays.fill(junk, (byte) 0x5a);
      ch.write(ByteBuffer.wrap(junk), (long) (page - 1) * pageSize);
    }

    WebhookInboxException e = assertThrows(WebhookInboxException.class, () -> WebhookInbox.sqlite(dir).open());
    assertTrue(e.getMessage().contains("is corrupt"), e.getMessage());
  }

  private static VerifiedWebhook event(String id, int n) {
    return new VerifiedWebhook("acme", id, "order.paid", null, Instant.ofEpochMilli(1000 + n),
        ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8), new byte[] {(byte) n, 7});
  }
}
