package dev.idem.webhooks.support;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** Reads an embedded inbox's file directly, to show what is (not) stored, bodies included. */
public final class InboxRows {
  private InboxRows() {}

  /** Rows in the inbox table. */
  public static long count(Path dir) throws SQLException {
    return scalar(dir, "SELECT COUNT(*) FROM idem_webhook_inbox");
  }

  /** Rows whose stored body contains {@code marker} (as UTF-8). */
  public static long bodiesContaining(Path dir, String marker) throws SQLException {
    return scalar(dir, "SELECT COUNT(*) FROM idem_webhook_inbox WHERE instr(CAST(body AS TEXT), '"
        + marker.replace("'", "''") + "') > 0");
  }

  /** The stored event ids in the order of the signature index: (source, signature digest). */
  public static List<String> eventIdsBySignature(Path dir) throws SQLException {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("inbox.db"));
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT event_id FROM idem_webhook_inbox ORDER BY source, signature_digest")) {
      List<String> out = new ArrayList<>();
      while (rs.next()) {
        out.add(rs.getString(1));
      }
      return out;
    }
  }

  /**
   * Who holds the lease on an event, and until when: {@code "owner@leaseUntilMillis"}, or
   * {@code "none"} when it is not leased.
   */
  public static String leaseHolder(Path dir, String source, String eventId) throws SQLException {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("inbox.db"));
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT lease_owner, lease_until FROM idem_webhook_inbox WHERE source = '"
            + source.replace("'", "''") + "' AND event_id = '" + eventId.replace("'", "''") + "'")) {
      if (!rs.next() || rs.getString(1) == null) {
        return "none";
      }
      return rs.getString(1) + "@" + rs.getLong(2);
    }
  }

  /** Runs one update on the inbox file (close the inbox first); returns the rows it changed. */
  public static int update(Path dir, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("inbox.db"));
        Statement s = c.createStatement()) {
      return s.executeUpdate(sql);
    }
  }

  private static long scalar(Path dir, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("inbox.db"));
        Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
