package dev.idem.webhooks;

import static dev.idem.webhooks.InboxListingIndexTest.LISTING_INDEX;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link InboxListingIndexTest} on PostgreSQL: each page of a listing is an index scan in the
 * listing's order, with no sort of the state's events, also on an inbox upgraded from the schema
 * before the index. The tables are small, so sequential scans are turned off for the EXPLAIN: the
 * question is whether an index serves the order, not what the planner picks for a few rows.
 */
@ExtendWith(PostgresExtension.class)
class PostgresInboxListingIndexTest {
  @Test
  void theFirstPageAndTheLaterOnesAreAnIndexScanInTheListingsOrder(PgDatabase db) throws Exception {
    List<String> pages = InboxListingIndexTest.listingSql(db.dataSource());
    try (Connection c = db.dataSource().getConnection()) {
      assertListingPlans(c, pages);
    }
  }

  @Test
  void anInboxAtTheSchemaBeforeTheIndexGetsItWhenOpenedAndKeepsItsEvents(PgDatabase db) throws Exception {
    try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).open()) {
      for (int i = 0; i < 3; i++) {
        assertEquals(AcceptResult.ACCEPTED, inbox.accept(new VerifiedWebhook("acme", "evt_" + i, "order.paid", null,
            Instant.ofEpochMilli(1000 + i), "{}".getBytes(StandardCharsets.UTF_8), new byte[] {(byte) i})));
      }
    }
    // Back to version 2, the schema the release before the listing index shipped.
    try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP INDEX IF EXISTS " + LISTING_INDEX);
      st.execute("DELETE FROM idem_webhook_schema_version WHERE version > 2");
      assertEquals(List.of("idem_webhook_inbox_due", "idem_webhook_inbox_signature"), indexes(c),
          "the inbox as version 2 left it");
    }

    try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).open()) {
      assertEquals(List.of("acme/evt_0", "acme/evt_1", "acme/evt_2"), inbox.list(InboxState.PENDING, 10).stream()
          .map(e -> e.source() + "/" + e.eventId()).toList(), "its events are kept");
    }
    try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT MAX(version) FROM idem_webhook_schema_version")) {
      rs.next();
      assertEquals(4, rs.getInt(1), "migrated on open");
      assertTrue(indexes(c).contains(LISTING_INDEX), "the upgraded inbox has the listing index: " + indexes(c));
      assertListingPlans(c, InboxListingIndexTest.listingSql(db.dataSource()));
    }
  }

  private static void assertListingPlans(Connection c, List<String> pages) throws Exception {
    try (Statement st = c.createStatement()) {
      st.execute("SET enable_seqscan = off");
    }
    for (String sql : pages) {
      boolean later = sql.contains(") > (");
      List<String> plan = explain(c, sql, later
          ? new Object[] {"PENDING", 1001L, "acme", "evt_1", 2}
          : new Object[] {"PENDING", 2});
      assertFalse(plan.stream().anyMatch(line -> line.strip().startsWith("->  Sort") || line.startsWith("Sort")),
          "a page sorts every event of its state: " + String.join("\n", plan) + "\nfor " + sql);
      assertTrue(plan.stream().anyMatch(line -> line.contains("Index Scan using " + LISTING_INDEX)),
          "a page is not an index scan of the listing index: " + String.join("\n", plan) + "\nfor " + sql);
      if (later) {
        assertTrue(plan.stream().anyMatch(line -> line.contains("Index Cond") && line.contains("received_at")),
            "a later page does not start at its cursor in the index: " + String.join("\n", plan));
      }
    }
  }

  private static List<String> explain(Connection c, String sql, Object... params) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("EXPLAIN " + sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      List<String> lines = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          lines.add(rs.getString(1));
        }
      }
      return lines;
    }
  }

  private static List<String> indexes(Connection c) throws Exception {
    List<String> out = new ArrayList<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT indexname FROM pg_indexes"
        + " WHERE tablename = 'idem_webhook_inbox' AND indexname NOT LIKE '%_pkey' ORDER BY indexname")) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }
}
