package dev.idem.server.internal;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/** The few statements in which SQLite and PostgreSQL differ: the schema, its upgrades, lock waits. */
public enum SqlDialect {
  /** SQLite 3.35 or later (upsert with RETURNING). */
  SQLITE("BLOB"),
  /** PostgreSQL 9.6 or later. */
  POSTGRESQL("BYTEA");

  /** The table every statement uses. */
  public static final String TABLE = "idem_server_record";

  private final String blob;

  SqlDialect(String blob) {
    this.blob = blob;
  }

  /**
   * Creates the schema if it is missing and adds what later versions added to an older one:
   * {@code claimed_at} (when the current claim was made, for operators; 0 in older rows) and
   * {@code taken_over} (whether it took over an expired claim).
   *
   * @param c a connection in auto-commit mode
   * @throws SQLException if the database refuses
   */
  public void migrate(Connection c) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS " + TABLE + " ("
          + "caller TEXT NOT NULL, route TEXT NOT NULL, idem_key TEXT NOT NULL, "
          + "fingerprint TEXT NOT NULL, state TEXT NOT NULL, generation BIGINT NOT NULL, owner TEXT NOT NULL, "
          + "lease_until BIGINT NOT NULL, expires_at BIGINT NOT NULL, "
          + "status INTEGER, headers TEXT, body " + blob + ", body_omitted INTEGER NOT NULL DEFAULT 0, "
          + "claimed_at BIGINT NOT NULL DEFAULT 0, taken_over INTEGER NOT NULL DEFAULT 0, "
          + "PRIMARY KEY (caller, route, idem_key))");
      Set<String> columns = columns(c);
      for (String column : new String[] {"claimed_at", "taken_over"}) {
        if (!columns.contains(column)) {
          st.execute("ALTER TABLE " + TABLE + " ADD COLUMN " + (this == POSTGRESQL ? "IF NOT EXISTS " : "")
              + column + " BIGINT NOT NULL DEFAULT 0");
        }
      }
      st.execute("CREATE INDEX IF NOT EXISTS " + TABLE + "_expires ON " + TABLE + " (expires_at)");
      // The operator's queries (in flight, stuck, oldest) and the gauges read by state and age.
      st.execute("CREATE INDEX IF NOT EXISTS " + TABLE + "_state ON " + TABLE + " (state, claimed_at)");
    }
  }

  private Set<String> columns(Connection c) throws SQLException {
    Set<String> out = new HashSet<>();
    if (this == SQLITE) {
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("PRAGMA table_info(" + TABLE + ")")) {
        while (rs.next()) {
          out.add(rs.getString("name").toLowerCase(Locale.ROOT));
        }
      }
    } else {
      // The table in the schema the statements resolve to, not a namesake in another schema.
      try (java.sql.PreparedStatement ps = c.prepareStatement("SELECT column_name FROM information_schema.columns"
          + " WHERE table_schema = current_schema() AND table_name = ?")) {
        ps.setString(1, TABLE);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            out.add(rs.getString(1).toLowerCase(Locale.ROOT));
          }
        }
      }
    }
    return out;
  }

  /**
   * Whether a failure means that a statement waited for a lock as long as it was allowed to: for
   * PostgreSQL, {@code lock_timeout} ({@code 55P03}) or a cancelled statement ({@code 57014}); for
   * SQLite, a busy database.
   *
   * @param e the failure
   * @return true for a lock wait that ended
   */
  public boolean isLockWaitOver(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s) {
        String state = s.getSQLState();
        if (this == POSTGRESQL && ("55P03".equals(state) || "57014".equals(state))) {
          return true;
        }
        // SQLITE_BUSY is 5; its extended codes (BUSY_SNAPSHOT 517, ...) keep 5 in the low byte.
        if (this == SQLITE && (s.getErrorCode() & 0xff) == 5) {
          return true;
        }
      }
    }
    return false;
  }
}
