package dev.idem.jdbc.internal;

import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;

/**
 * The SQL of {@code idem_operation}: every statement the journal runs, in one place. Methods take
 * the connection of the current unit of work and never commit.
 */
public final class OperationTable {
  static final String COLUMNS = "scope, operation, op_key, reference, fingerprint, request_json, state, owner,"
      + " generation, lease_expires_at, next_attempt_at, created_at, updated_at, attempts_json, response_json,"
      + " reason, quarantined_at, quarantine_reason";
  private static final String BY_ID = " WHERE scope = ? AND operation = ? AND op_key = ?";
  private static final String AFTER = " AND (scope > ? OR (scope = ? AND (operation > ? OR (operation = ? AND op_key > ?))))";
  private static final String ORDER = " ORDER BY scope, operation, op_key";
  private static final String TERMINAL = "('SUCCEEDED', 'FAILED', 'UNCERTAIN')";
  /** The longest reason stored; longer ones are cut. */
  static final int MAX_REASON = 2000;

  private final Dialect dialect;

  public OperationTable(Dialect dialect) {
    this.dialect = dialect;
  }

  /** A position in identity order, as stored (a corrupt row's key may not be a valid key). */
  public record RowKey(String scope, String operation, String key) {
    public static RowKey of(OperationId id) {
      return new RowKey(id.scope(), id.operation(), id.key().value());
    }
  }

  /** Values of a new PENDING row. */
  public record NewRow(OperationId id, String reference, String fingerprint, String requestJson, long createdAt) {
  }

  /**
   * Inserts a PENDING row unless the identity exists.
   *
   * @return true if this call inserted it
   */
  public boolean insertIfAbsent(Connection c, NewRow row) throws SQLException {
    String sql = "INSERT INTO idem_operation (scope, operation, op_key, reference, fingerprint, request_json, state,"
        + " generation, created_at, updated_at, attempts_json) VALUES (?, ?, ?, ?, ?, ?, 'PENDING', 0, ?, ?, '[]')"
        + dialect.insertIfAbsentSuffix();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bindId(ps, 1, row.id());
      ps.setString(4, row.reference());
      ps.setString(5, row.fingerprint());
      ps.setString(6, row.requestJson());
      ps.setLong(7, row.createdAt());
      ps.setLong(8, row.createdAt());
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      if ("23505".equals(e.getSQLState())) {
        return false; // H2 has no ON CONFLICT outside its PostgreSQL mode: the key exists
      }
      throw e;
    }
  }

  /** Reads one row, or null, with an optional locking clause. */
  public RawRow select(Connection c, OperationId id, String lockClause) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS + " FROM idem_operation" + BY_ID
        + (lockClause == null ? "" : lockClause))) {
      bindId(ps, 1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? read(rs) : null;
      }
    }
  }

  /** Reads one row for a read-modify-write (PostgreSQL: {@code FOR UPDATE}, waiting for other writers). */
  public RawRow selectForUpdate(Connection c, OperationId id) throws SQLException {
    return select(c, id, dialect.lockForUpdate());
  }

  /** Reads one row to claim it; on PostgreSQL skips it (returns null) if another node holds its lock. */
  public RawRow selectForClaim(Connection c, OperationId id) throws SQLException {
    return select(c, id, dialect.lockForClaim());
  }

  /** True if the identity exists at all. */
  public boolean exists(Connection c, OperationId id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM idem_operation" + BY_ID)) {
      bindId(ps, 1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /**
   * Claims a row read at {@code expectedState} and {@code expectedGeneration}.
   *
   * @return false if it changed in between
   */
  public boolean claim(Connection c, OperationId id, String expectedState, long expectedGeneration, String owner,
      long newGeneration, long leaseExpiresAt, long now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE idem_operation SET state = 'IN_FLIGHT', owner = ?,"
        + " generation = ?, lease_expires_at = ?, next_attempt_at = NULL, updated_at = ?, response_json = NULL,"
        + " reason = NULL" + BY_ID + " AND state = ? AND generation = ? AND quarantined_at IS NULL")) {
      ps.setString(1, owner);
      ps.setLong(2, newGeneration);
      ps.setLong(3, leaseExpiresAt);
      ps.setLong(4, now);
      bindId(ps, 5, id);
      ps.setString(8, expectedState);
      ps.setLong(9, expectedGeneration);
      return ps.executeUpdate() == 1;
    }
  }

  /**
   * Replaces the attempts of an IN_FLIGHT row, fenced by owner and generation.
   *
   * @return false if the fence did not match (stale owner)
   */
  public boolean updateAttempts(Connection c, OperationId id, String owner, long generation, String attemptsJson,
      long updatedAt) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE idem_operation SET attempts_json = ?, updated_at = ?"
        + BY_ID + " AND state = 'IN_FLIGHT' AND generation = ? AND owner = ?")) {
      ps.setString(1, attemptsJson);
      ps.setLong(2, updatedAt);
      bindId(ps, 3, id);
      ps.setLong(6, generation);
      ps.setString(7, owner);
      return ps.executeUpdate() == 1;
    }
  }

  /** The new values of a state change. */
  public record Change(OperationState target, Long nextAttemptAt, long updatedAt, String responseJson,
      String reason) {
  }

  /**
   * Moves an IN_FLIGHT row held by owner and generation; the fence is in the WHERE clause.
   *
   * @return false if the fence did not match (stale owner)
   */
  public boolean transitionFenced(Connection c, OperationId id, String owner, long generation, Change ch)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(changeSql()
        + BY_ID + " AND state = 'IN_FLIGHT' AND generation = ? AND owner = ?")) {
      int i = bindChange(ps, ch);
      bindId(ps, i, id);
      ps.setLong(i + 3, generation);
      ps.setString(i + 4, owner);
      return ps.executeUpdate() == 1;
    }
  }

  /**
   * Moves a row that nobody holds (abandon, re-drive), if it is still as read.
   *
   * @return false if it changed in between
   */
  public boolean transitionUnheld(Connection c, OperationId id, String expectedState, long expectedGeneration,
      Change ch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(changeSql()
        + BY_ID + " AND state = ? AND generation = ?")) {
      int i = bindChange(ps, ch);
      bindId(ps, i, id);
      ps.setString(i + 3, expectedState);
      ps.setLong(i + 4, expectedGeneration);
      return ps.executeUpdate() == 1;
    }
  }

  private static String changeSql() {
    return "UPDATE idem_operation SET state = ?, lease_expires_at = NULL, next_attempt_at = ?, updated_at = ?,"
        + " response_json = ?, reason = ?";
  }

  private static int bindChange(PreparedStatement ps, Change ch) throws SQLException {
    ps.setString(1, ch.target().name());
    if (ch.nextAttemptAt() == null) {
      ps.setNull(2, Types.BIGINT);
    } else {
      ps.setLong(2, ch.nextAttemptAt());
    }
    ps.setLong(3, ch.updatedAt());
    ps.setString(4, ch.responseJson());
    ps.setString(5, cut(ch.reason()));
    return 6;
  }

  /** One page of rows due at {@code now}, after {@code after}, in identity order. */
  public List<RawRow> due(Connection c, long now, RowKey after, int limit) throws SQLException {
    String sql = "SELECT " + COLUMNS + " FROM idem_operation WHERE quarantined_at IS NULL AND ("
        + "(state = 'PENDING' AND (next_attempt_at IS NULL OR next_attempt_at <= ?))"
        + " OR (state = 'IN_FLIGHT' AND (lease_expires_at IS NULL OR lease_expires_at <= ?)))"
        + (after == null ? "" : AFTER) + ORDER + " LIMIT ?" + dialect.lockForClaim();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, now);
      ps.setLong(2, now);
      int i = bindAfter(ps, 3, after);
      ps.setInt(i, limit);
      return list(ps);
    }
  }

  /** One page of rows in a state, after {@code after}, in identity order. */
  public List<RawRow> inState(Connection c, OperationState state, RowKey after, int limit) throws SQLException {
    String sql = "SELECT " + COLUMNS + " FROM idem_operation WHERE quarantined_at IS NULL AND state = ?"
        + (after == null ? "" : AFTER) + ORDER + " LIMIT ?";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, state.name());
      int i = bindAfter(ps, 2, after);
      ps.setInt(i, limit);
      return list(ps);
    }
  }

  /** Rows of a scope with a reference, oldest first. */
  public List<RawRow> byReference(Connection c, String scope, String reference) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS + " FROM idem_operation"
        + " WHERE scope = ? AND reference = ? AND quarantined_at IS NULL ORDER BY created_at" + ", operation, op_key")) {
      ps.setString(1, scope);
      ps.setString(2, reference);
      return list(ps);
    }
  }

  /** Rows whose state is none of the known ones and that are not yet quarantined. */
  public List<RawRow> unknownStates(Connection c, int limit) throws SQLException {
    StringBuilder in = new StringBuilder();
    for (OperationState s : OperationState.values()) {
      in.append(in.length() == 0 ? "" : ", ").append('\'').append(s.name()).append('\'');
    }
    try (PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS + " FROM idem_operation"
        + " WHERE quarantined_at IS NULL AND state NOT IN (" + in + ")" + ORDER + " LIMIT ?")) {
      ps.setInt(1, limit);
      return list(ps);
    }
  }

  /** Flags a row as quarantined. */
  public void quarantine(Connection c, String scope, String operation, String key, long at, String reason)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE idem_operation SET quarantined_at = ?,"
        + " quarantine_reason = ? WHERE scope = ? AND operation = ? AND op_key = ? AND quarantined_at IS NULL")) {
      ps.setLong(1, at);
      ps.setString(2, cut(reason, 500));
      ps.setString(3, scope);
      ps.setString(4, operation);
      ps.setString(5, key);
      ps.executeUpdate();
    }
  }

  /** Quarantined rows, oldest quarantine first. */
  public List<RawRow> quarantined(Connection c, int limit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS + " FROM idem_operation"
        + " WHERE quarantined_at IS NOT NULL ORDER BY quarantined_at, scope, operation, op_key LIMIT ?")) {
      ps.setInt(1, limit);
      return list(ps);
    }
  }

  /** Deletes terminal rows last updated before {@code before} (index on state, updated_at). */
  public int purge(Connection c, long before) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("DELETE FROM idem_operation WHERE state IN " + TERMINAL
        + " AND updated_at < ? AND quarantined_at IS NULL")) {
      ps.setLong(1, before);
      return ps.executeUpdate();
    }
  }

  private static List<RawRow> list(PreparedStatement ps) throws SQLException {
    List<RawRow> rows = new ArrayList<>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        rows.add(read(rs));
      }
    }
    return rows;
  }

  private static int bindAfter(PreparedStatement ps, int i, RowKey after) throws SQLException {
    if (after == null) {
      return i;
    }
    ps.setString(i, after.scope());
    ps.setString(i + 1, after.scope());
    ps.setString(i + 2, after.operation());
    ps.setString(i + 3, after.operation());
    ps.setString(i + 4, after.key());
    return i + 5;
  }

  private static void bindId(PreparedStatement ps, int i, OperationId id) throws SQLException {
    ps.setString(i, id.scope());
    ps.setString(i + 1, id.operation());
    ps.setString(i + 2, id.key().value());
  }

  private static RawRow read(ResultSet rs) throws SQLException {
    return new RawRow(rs.getString("scope"), rs.getString("operation"), rs.getString("op_key"),
        rs.getString("reference"), rs.getString("fingerprint"), rs.getString("request_json"), rs.getString("state"),
        rs.getString("owner"), rs.getLong("generation"), Instants.nullableLong(rs, "lease_expires_at"),
        Instants.nullableLong(rs, "next_attempt_at"), rs.getLong("created_at"), rs.getLong("updated_at"),
        rs.getString("attempts_json"), rs.getString("response_json"), rs.getString("reason"),
        Instants.nullableLong(rs, "quarantined_at"), rs.getString("quarantine_reason"));
  }

  /** Cuts a reason to what the reason column holds. */
  public static String cut(String reason) {
    return cut(reason, MAX_REASON);
  }

  private static String cut(String s, int max) {
    return s == null || s.length() <= max ? s : s.substring(0, max - 3) + "...";
  }
}
