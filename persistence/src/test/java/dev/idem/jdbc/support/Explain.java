package dev.idem.jdbc.support;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** What SQLite makes of a statement the journal ran: its plan, or its program. */
public final class Explain {
  private Explain() {
  }

  /** The plan's steps ({@code EXPLAIN QUERY PLAN}); every parameter bound to NULL, which does not change the plan. */
  public static List<String> plan(Connection c, String sql) throws SQLException {
    return column(c, "EXPLAIN QUERY PLAN " + sql, "detail");
  }

  /** The opcodes of the statement's program ({@code EXPLAIN}); every parameter bound to NULL. */
  public static List<String> opcodes(Connection c, String sql) throws SQLException {
    return column(c, "EXPLAIN " + sql, "opcode");
  }

  private static List<String> column(Connection c, String explain, String column) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(explain)) {
      for (int i = 1; i <= ps.getParameterMetaData().getParameterCount(); i++) {
        ps.setNull(i, java.sql.Types.NULL);
      }
      List<String> values = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          values.add(rs.getString(column));
        }
      }
      return values;
    }
  }
}
