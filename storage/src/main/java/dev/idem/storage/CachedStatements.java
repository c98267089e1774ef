package dev.idem.storage;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

/**
 * A {@link SqlSession} over one connection that keeps every prepared statement for the
 * connection's life, keyed by SQL text: the journal runs a dozen fixed statements, and parsing and
 * planning them on every call cost more than executing them. Not thread-safe: its owner uses it
 * under a lock. {@link #close()} closes the statements, not the connection.
 */
final class CachedStatements implements SqlSession, AutoCloseable {
  private final Connection connection;
  private final Map<String, PreparedStatement> statements = new HashMap<>();

  CachedStatements(Connection connection) {
    this.connection = connection;
  }

  @Override
  public Connection connection() {
    return connection;
  }

  @Override
  public PreparedStatement prepare(String sql) throws SQLException {
    PreparedStatement ps = statements.get(sql);
    if (ps == null) {
      ps = connection.prepareStatement(sql);
      statements.put(sql, ps);
    }
    return ps;
  }

  @Override
  public void release(PreparedStatement statement) {
    // kept for the next use of its SQL; every use sets all of its parameters
  }

  @Override
  public void close() {
    for (PreparedStatement ps : statements.values()) {
      try {
        ps.close();
      } catch (SQLException ignored) {
        // the connection is being closed anyway
      }
    }
    statements.clear();
  }
}
