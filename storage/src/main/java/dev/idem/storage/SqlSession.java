package dev.idem.storage;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The connection of one unit of journal work, and where its statements come from. A store that
 * keeps one connection for its whole life (embedded SQLite) hands out cached prepared statements, so
 * that the SQL of the hot path is parsed and planned once, not on every call; a store that borrows
 * pooled connections keeps them for the unit only (the pool and driver cache them).
 *
 * <p>Callers pair every {@link #prepare} with a {@link #release} in a {@code finally} block, close
 * their result sets themselves, and set every parameter on each use.
 */
public interface SqlSession {
  /** The connection of the current unit of work (for statements that are not worth caching). */
  Connection connection();

  /** A statement for {@code sql}, possibly one prepared earlier on this connection. */
  PreparedStatement prepare(String sql) throws SQLException;

  /** Gives the statement back: closes it, or keeps it for the next {@link #prepare} of its SQL. */
  void release(PreparedStatement statement) throws SQLException;

  /**
   * A session over a connection the caller owns (an app's transaction), that prepares a new
   * statement on every call and closes it on release.
   *
   * @param c the connection; not closed by the session
   * @return the session
   */
  static SqlSession uncached(Connection c) {
    return new SqlSession() {
      @Override
      public Connection connection() {
        return c;
      }

      @Override
      public PreparedStatement prepare(String sql) throws SQLException {
        return c.prepareStatement(sql);
      }

      @Override
      public void release(PreparedStatement statement) throws SQLException {
        statement.close();
      }
    };
  }
}
