package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link InboxClaimPlanTest} on PostgreSQL: the claim ({@code FOR UPDATE SKIP LOCKED}) reads the
 * due events from the due index in its order; no sort takes in the table's rows (sorting the few
 * rows a claim took, at most its limit, is fine). A claim runs one such statement per range
 * (expired leases, then PENDING). Sequential scans are off for the EXPLAIN, as the tables are small.
 */
@ExtendWith(PostgresExtension.class)
class PostgresInboxClaimPlanTest {
  @Test
  void aClaimReadsTheDueEventsInTheDueIndexsOrderAndSortsNone(PgDatabase db) throws Exception {
    List<String> claims = InboxClaimPlanTest.claimSql(db.dataSource()).stream()
        .filter(sql -> sql.contains("SKIP LOCKED")).distinct().toList();
    assertEquals(2, claims.size(), "one claim statement per range: " + claims);
    try (Connection c = db.dataSource().getConnection()) {
      try (Statement st = c.createStatement()) {
        st.execute("SET enable_seqscan = off");
      }
      for (String claim : claims) {
        List<String> plan = explain(c, claim);
        String shown = String.join("\n", plan) + "\nfor " + claim;
        for (int i = 0; i < plan.size(); i++) {
          if (isNode(plan.get(i), "Sort")) {
            List<String> sorted = subtree(plan, i);
            assertFalse(sorted.stream().anyMatch(line -> line.contains(" on idem_webhook_inbox")
                && !sorted.stream().anyMatch(l -> isNode(l, "Limit"))),
                "a claim sorts every due event: " + shown);
          }
        }
        assertTrue(plan.stream().anyMatch(line -> line.contains("Index Scan using idem_webhook_inbox_due")),
            "a claim does not walk the due index: " + shown);
      }
    }
  }

  private static boolean isNode(String line, String name) {
    String s = line.strip();
    return s.startsWith(name + " ") || s.startsWith("->  " + name + " ");
  }

  /** The node at {@code at} and every line indented deeper below it. */
  private static List<String> subtree(List<String> plan, int at) {
    int indent = indent(plan.get(at));
    List<String> out = new ArrayList<>(List.of(plan.get(at)));
    for (int i = at + 1; i < plan.size() && indent(plan.get(i)) > indent; i++) {
      out.add(plan.get(i));
    }
    return out;
  }

  private static int indent(String line) {
    int n = 0;
    while (n < line.length() && line.charAt(n) == ' ') {
      n++;
    }
    return n;
  }

  /** EXPLAIN with each parameter bound to a value of its type: times 1,000, limits 2, owners "t". */
  static List<String> explain(Connection c, String sql) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("EXPLAIN " + sql)) {
      ParameterMetaData meta = ps.getParameterMetaData();
      for (int i = 1; i <= meta.getParameterCount(); i++) {
        switch (meta.getParameterType(i)) {
          case Types.BIGINT -> ps.setLong(i, 1000L);
          case Types.INTEGER, Types.SMALLINT -> ps.setInt(i, 2);
          default -> ps.setString(i, "t");
        }
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
}
