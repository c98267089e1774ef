package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.Explain;
import dev.idem.webhooks.support.InboxStatements;
import dev.idem.webhooks.internal.ClaimedEvent;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.List;
import java.util.Locale;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * The processor's claim reads the due events oldest due first from the due index (state,
 * next_attempt_at) without sorting them: it asked for PENDING-and-due OR PROCESSING-with-an-expired-
 * lease in one statement, which SQLite reads as two index ranges and then sorts every due event for
 * each claim (a claim takes as many as there are free workers, 4 by default), so that working off a
 * backlog of D due events cost D log D per claim, D² over the backlog, on the inbox's one writer
 * connection, where accepts wait. A claim now reads the two ranges of the index one after the other
 * (expired leases first, then PENDING), each in index order with its own limit. Asked with EXPLAIN
 * QUERY PLAN of the statements a claim ran. {@link PostgresInboxClaimPlanTest} asks PostgreSQL the
 * same.
 */
class InboxClaimPlanTest {
  @TempDir
  Path dir;

  @Test
  void aClaimReadsTheDueEventsInTheDueIndexsOrderAndSortsNone() throws Exception {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve("inbox.db"));
    List<String> selects = claimSql(sqlite).stream()
        .filter(sql -> sql.toUpperCase(Locale.ROOT).startsWith("SELECT") && sql.contains("next_attempt_at")).toList();
    assertFalse(selects.isEmpty(), "the claim's reads of the due events");
    try (Connection c = sqlite.getConnection()) {
      for (String sql : selects) {
        List<String> plan = Explain.plan(c, sql);
        assertFalse(plan.stream().anyMatch(step -> step.contains("TEMP B-TREE")),
            "a claim sorts every due event: " + plan + " for " + sql);
        assertTrue(plan.stream().allMatch(step -> step.startsWith("SEARCH idem_webhook_inbox USING INDEX"
            + " idem_webhook_inbox_due (state=?")), "a claim does not walk the due index: " + plan + " for " + sql);
      }
    }
  }

  /**
   * The statements a claim on {@code dataSource} ran, as prepared, after the inbox is opened with
   * three events due, of which the claim takes two (the last one's lease then expires, and a second
   * claim takes it back with the third).
   */
  static List<String> claimSql(DataSource dataSource) throws Exception {
    return InboxStatements.of(dataSource, store -> {
      List<ClaimedEvent> first = store.claim(2, "a", 2000, 3000);
      assertEquals(List.of("evt_0", "evt_1"), first.stream().map(ClaimedEvent::eventId).toList(), "oldest due first");
      store.markDone(first.get(0), 2001);
      List<ClaimedEvent> again = store.claim(2, "b", 4000, 5000);
      assertEquals(List.of("evt_1", "evt_2"), again.stream().map(ClaimedEvent::eventId).toList(),
          "the expired lease first, then a due event");
    });
  }

}
