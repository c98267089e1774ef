package dev.idem.storage;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** The embedded journal's facts about itself, in {@code idem_journal_meta} (SQLite only). */
final class Meta {
  /** The journal's id, also in the directory's id file ({@link EmbeddedFiles}). */
  static final String JOURNAL_ID = "journal_id";

  private Meta() {
  }

  static String get(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT value FROM idem_journal_meta WHERE name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /** Like {@link #get}, but null when the table does not exist yet (a new or emptied database). */
  static String getIfPresent(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'idem_journal_meta'");
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        return null;
      }
    }
    return get(c, name);
  }

  /** Sets a value and commits it (the connection is in auto-commit mode during the open). */
  static void put(Connection c, String name, String value) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO idem_journal_meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = ?")) {
      ps.setString(1, name);
      ps.setString(2, value);
      ps.setString(3, value);
      ps.executeUpdate();
    }
  }
}
