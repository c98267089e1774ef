package dev.idem.storage;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** An embedded store's facts about itself, in its {@link Schema#metaTable()} (SQLite only). */
final class Meta {
  /**
   * The store's id, also in its id file ({@link EmbeddedFiles}). Named for the journal, which had
   * it first; the guard and the inbox use the same name in their own tables.
   */
  static final String JOURNAL_ID = "journal_id";

  private Meta() {
  }

  /**
   * The value of {@code name}, or null if it has none or the table does not exist yet (a new or
   * emptied database).
   */
  static String getIfPresent(Connection c, String table, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
      }
    }
    try (PreparedStatement ps = c.prepareStatement("SELECT value FROM " + table + " WHERE name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /** Sets a value and commits it (the connection is in auto-commit mode during the open). */
  static void put(Connection c, String table, String name, String value) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO " + table + " (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = ?")) {
      ps.setString(1, name);
      ps.setString(2, value);
      ps.setString(3, value);
      ps.executeUpdate();
    }
  }
}
