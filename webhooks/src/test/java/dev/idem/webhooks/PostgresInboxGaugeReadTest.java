package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link InboxGaugeReadTest} on PostgreSQL, where a fleet's instances each scrape the one table:
 * the gauges of a scrape share one reading per refresh, and its reads are index scans bounded to
 * the states they count, never through the DONE events; the oldest queued event is the first of
 * its state in the listing index, read alone. The tables are small, so sequential scans
 * are turned off for the EXPLAIN: the question is whether an index bounds the read, not what the
 * planner picks for a few rows.
 */
@ExtendWith(PostgresExtension.class)
class PostgresInboxGaugeReadTest {
  @Test
  void aScrapeReadsNoDoneEvent(PgDatabase db) throws Exception {
    List<String> reads = InboxGaugeReadTest.firstScrape(db.dataSource());
    try (Connection c = db.dataSource().getConnection()) {
      try (Statement st = c.createStatement()) {
        st.execute("SET enable_seqscan = off");
      }
      for (String sql : reads) {
        List<String> plan = explain(c, sql);
        String shown = String.join("\n", plan) + "\nfor " + sql;
        assertFalse(plan.stream().anyMatch(line -> line.contains("Seq Scan")), "a gauge reads the whole table: "
            + shown);
        assertTrue(plan.stream().anyMatch(line -> line.contains("Index Cond") && line.contains("state")),
            "a gauge's read is not bounded by state in an index, so it reads the DONE events too: " + shown);
        if (sql.contains("ORDER BY received_at")) {
          assertTrue(plan.stream().anyMatch(line -> line.contains("Limit")), "the oldest queued event is found by"
              + " reading every queued one rather than the first in the index: " + shown);
        }
      }
    }
  }

  @Test
  void scrapesWithinTheRefreshShareOneReading(PgDatabase db) throws Exception {
    InboxGaugeReadTest.refreshes(db.dataSource());
  }

  /** The plan of {@code sql}, which the gauges run without parameters. */
  private static List<String> explain(Connection c, String sql) throws Exception {
    List<String> lines = new ArrayList<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("EXPLAIN " + sql)) {
      while (rs.next()) {
        lines.add(rs.getString(1));
      }
    }
    return lines;
  }
}
