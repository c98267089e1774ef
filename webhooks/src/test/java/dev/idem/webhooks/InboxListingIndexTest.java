package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.Explain;
import dev.idem.webhooks.support.InboxStatements;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * A listing of one state ({@link WebhookInbox#list(InboxState, InboxEntry, int)}, the CLI's
 * {@code webhooks list} and {@code dead-letters}) reads its order from an index: SQLite used to read
 * every event of the state through the due index, (state, next_attempt_at), and sort them all for
 * each page, so that listing a large inbox cost N log N per page, N² over the whole listing. Asked
 * with EXPLAIN QUERY PLAN of the statements the inbox ran, not timed. {@link
 * PostgresInboxListingIndexTest} asks PostgreSQL the same.
 */
class InboxListingIndexTest {
  /** The index the listing's order walks, created by migration V4 (SQLite) and V3 (PostgreSQL). */
  static final String LISTING_INDEX = "idem_webhook_inbox_listing";

  @TempDir
  Path dir;

  @Test
  void theFirstPageAndTheLaterOnesWalkAnIndexInTheListingsOrderAndSortNothing() throws Exception {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve("inbox.db"));
    List<String> pages = listingSql(sqlite);
    try (Connection c = sqlite.getConnection()) {
      assertListingPlans(c, pages);
    }
  }

  @Test
  void anInboxAtTheSchemaBeforeTheIndexGetsItWhenOpenedAndKeepsItsEvents() throws Exception {
    Path inboxDir = dir.resolve("inbox");
    try (WebhookInbox inbox = WebhookInbox.sqlite(inboxDir).clock(Clock.fixed(Instant.ofEpochMilli(5000),
        java.time.ZoneOffset.UTC)).open()) {
      for (int i = 0; i < 3; i++) {
        assertEquals(AcceptResult.ACCEPTED, inbox.accept(new VerifiedWebhook("acme", "evt_" + i, "order.paid", null,
            Instant.ofEpochMilli(1000 + i), "{}".getBytes(StandardCharsets.UTF_8), new byte[] {(byte) i})));
      }
    }
    // Back to version 3, the schema the release before the listing index shipped: the migration
    // that adds it adds nothing else (the later one creates its table only if missing).
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + inboxDir.resolve("inbox.db"));
        Statement st = c.createStatement()) {
      st.execute("DROP INDEX IF EXISTS " + LISTING_INDEX);
      st.execute("DELETE FROM idem_webhook_schema_version WHERE version > 3");
      assertEquals(List.of("idem_webhook_inbox_due", "idem_webhook_inbox_signature"), indexes(c),
          "the inbox as version 3 left it");
    }

    try (WebhookInbox inbox = WebhookInbox.sqlite(inboxDir).open()) {
      assertEquals(List.of("acme/evt_0", "acme/evt_1", "acme/evt_2"), inbox.list(InboxState.PENDING, 10).stream()
          .map(e -> e.source() + "/" + e.eventId()).toList(), "its events are kept");
    }
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + inboxDir.resolve("inbox.db"));
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT MAX(version) FROM idem_webhook_schema_version")) {
      rs.next();
      assertEquals(5, rs.getInt(1), "migrated on open");
      assertTrue(indexes(c).contains(LISTING_INDEX), "the upgraded inbox has the listing index: " + indexes(c));
      SQLiteDataSource fresh = new SQLiteDataSource();
      fresh.setUrl("jdbc:sqlite:" + dir.resolve("fresh.db"));
      assertListingPlans(c, listingSql(fresh));
    }
    try (WebhookInbox reader = WebhookInbox.openReadOnly(inboxDir)) {
      assertEquals(3, reader.list(InboxState.PENDING, null, 10).size(), "and the read-only CLI reads it");
    }
  }

  /**
   * The two listing statements an inbox on {@code dataSource} runs: the first page's, then a later
   * page's (after a cursor), as prepared. The inbox is opened on its schema first, with three events.
   */
  static List<String> listingSql(DataSource dataSource) throws Exception {
    List<String> executed = InboxStatements.of(dataSource, store -> {
      List<InboxEntry> first = store.list(InboxState.PENDING, null, 2);
      assertEquals(2, first.size());
      assertEquals(1, store.list(InboxState.PENDING, first.get(1), 2).size());
    });
    List<String> listing = new ArrayList<>(executed.stream().filter(sql -> sql.contains("ORDER BY received_at"))
        .toList());
    listing.sort((a, b) -> Integer.compare(a.length(), b.length()));
    assertEquals(2, listing.size(), "a first page and a later page: " + executed);
    return listing;
  }


  private static void assertListingPlans(Connection c, List<String> pages) throws Exception {
    for (String sql : pages) {
      List<String> plan = Explain.plan(c, sql);
      assertFalse(plan.stream().anyMatch(step -> step.contains("TEMP B-TREE")),
          "a page sorts every event of its state: " + plan + " for " + sql);
      assertTrue(plan.stream().anyMatch(step -> step.startsWith("SEARCH idem_webhook_inbox USING INDEX "
          + LISTING_INDEX + " (state=?")), "a page does not walk the listing index: " + plan + " for " + sql);
    }
    List<String> later = Explain.plan(c, pages.get(1));
    assertTrue(later.stream().anyMatch(step -> step.contains("(received_at,source,event_id)>(?,?,?)")),
        "a later page seeks past its cursor in the index rather than reading the pages before it: " + later);
  }

  private static List<String> indexes(Connection c) throws Exception {
    List<String> out = new ArrayList<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT name FROM sqlite_master"
        + " WHERE type = 'index' AND tbl_name = 'idem_webhook_inbox' AND sql IS NOT NULL ORDER BY name")) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }
}
