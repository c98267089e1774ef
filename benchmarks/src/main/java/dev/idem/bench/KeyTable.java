package dev.idem.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The textbook floor's table: a key, a text and a state, indexed by the key alone. The begin and the
 * outcome are one upsert each.
 */
final class KeyTable implements FloorTable {
  private PreparedStatement upsert;

  @Override
  public void open(Connection connection) throws SQLException {
    try (Statement st = connection.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS op (op_key TEXT PRIMARY KEY, text TEXT NOT NULL, state TEXT NOT NULL,"
          + " updated_at INTEGER NOT NULL)");
    }
    upsert = connection.prepareStatement("INSERT INTO op VALUES (?, ?, ?, ?) ON CONFLICT (op_key) DO UPDATE"
        + " SET state = excluded.state, updated_at = excluded.updated_at");
  }

  @Override
  public void write(String key, String text, String state, long now) throws SQLException {
    upsert.setString(1, key);
    upsert.setString(2, text);
    upsert.setString(3, state);
    upsert.setLong(4, now);
    upsert.executeUpdate();
  }

  @Override
  public void close() throws SQLException {
    if (upsert != null) {
      upsert.close();
    }
  }
}
