package dev.idem.jdbc.internal;

import dev.idem.storage.Dialect;
import dev.idem.storage.SqlSession;
import dev.idem.storage.StoredText;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The SQL of {@code idem_operation}: every statement the journal runs, in one place. Methods take
 * the connection of the current unit of work and never commit.
 */
public class OperationTable {
  static final String COLUMNS = "scope, operation, op_key, reference, fingerprint, request_json, state, owner,"
      + " generation, lease_expires_at, next_attempt_at, created_at, updated_at, attempts_json, response_json,"
      + " reason, quarantined_at, quarantine_reason, request_check, queued, outcome_delivered_at";
  /** {@link #COLUMNS} with a NULL in place of {@code request_json}, so that {@code read} still applies. */
  private static final String COLUMNS_WITHOUT_REQUEST = COLUMNS.replace(" request_json,", " NULL,");
  /**
   * {@link #COLUMNS} with NULLs in place of {@code request_json} and {@code response_json}, the only
   * columns whose size follows the bodies: what a listing reads ({@link #summariesInState}).
   */
  private static final String COLUMNS_WITHOUT_BODIES = COLUMNS_WITHOUT_REQUEST.replace(" response_json,", " NULL,");
  /**
   * The most stored text (the request, response and attempts JSON, in characters) one read of a
   * page takes from the database before it stops: 4 Mi characters, about six requests with 512 KiB
   * bodies (stored as base64), or a page of 100 small ones in one read. The journal returns a page
   * cut there as a short page (the SPI allows it: only an empty page is the last), and reads on
   * past it only while every row it took was set aside as undecodable. A page of 100 such requests
   * was read whole, 68 MB of text before the first was decoded, and a resume of them ran out of a
   * 64 MiB heap before its first send.
   */
  public static final long PAGE_READ_CHARS = 4L * 1024 * 1024;
  private static final String BY_ID = " WHERE scope = ? AND operation = ? AND op_key = ?";
  private static final String AFTER = " AND (scope > ? OR (scope = ? AND (operation > ? OR (operation = ? AND op_key > ?))))";
  private static final String ORDER = " ORDER BY scope, operation, op_key";
  /**
   * The terminal states, for statements over many rows (a purge's batch), where the list is built
   * once per batch and lets the planner seek each state in {@code idem_operation_state_updated}.
   */
  private static final String TERMINAL = "('SUCCEEDED', 'FAILED', 'UNCERTAIN')";
  /**
   * A terminal row, for the statements that run once per operation: three comparisons, not
   * {@code state IN} {@link #TERMINAL}, for which SQLite builds a temporary B-tree each time the
   * statement runs (it does for an IN list of more than two constants), more work than the
   * single-row statement's own. Also the condition of the SQLite index
   * {@code idem_operation_undelivered} since schema version 5, for the same reason.
   */
  private static final String IS_TERMINAL = "(state = 'SUCCEEDED' OR state = 'FAILED' OR state = 'UNCERTAIN')";
  /** The longest reason stored; longer ones are cut. */
  static final int MAX_REASON = 2000;
  /** The quarantine_reason column's length, in characters. */
  static final int MAX_QUARANTINE_REASON = 500;

  private final Dialect dialect;
  /** Made once: it was built per begin, and the statement cache hashed the new string each time. */
  private final String insertIfAbsent;

  public OperationTable(Dialect dialect) {
    this.dialect = dialect;
    this.insertIfAbsent = "INSERT INTO idem_operation (scope, operation, op_key, reference, fingerprint, request_json,"
        + " request_check, state, owner, generation, lease_expires_at, created_at, updated_at, attempts_json, queued)"
        + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '[]', ?)"
        + dialect.insertIfAbsentSuffix();
  }

  /** A position in identity order, as stored (a corrupt row's key may not be a valid key). */
  public record RowKey(String scope, String operation, String key) {
    public static RowKey of(OperationId id) {
      return new RowKey(id.scope(), id.operation(), id.key().value());
    }
  }

  /**
   * Values of a new row: PENDING, or IN_FLIGHT at generation 1 if it is claimed as it is inserted.
   *
   * @param requestCheck the checksum binding {@code requestJson} to {@code fingerprint} (see
   *     {@link RequestCheck})
   * @param owner the owner that claims the row as it is inserted, or null for a PENDING row
   * @param leaseExpiresAt the claim's lease expiry; ignored without an owner
   */
  public record NewRow(OperationId id, String reference, String fingerprint, String requestJson, String requestCheck,
      long createdAt, boolean queued, String owner, long leaseExpiresAt) {
  }

  /**
   * Inserts a row unless the identity exists: PENDING, or IN_FLIGHT under the row's owner.
   *
   * @return true if this call inserted it
   */
  public boolean insertIfAbsent(SqlSession c, NewRow row) throws SQLException {
    boolean claimed = row.owner() != null;
    return run(c, insertIfAbsent, ps -> {
      bindId(ps, 1, row.id());
      ps.setString(4, row.reference());
      ps.setString(5, row.fingerprint());
      ps.setString(6, row.requestJson());
      ps.setString(7, row.requestCheck());
      ps.setString(8, claimed ? "IN_FLIGHT" : "PENDING");
      ps.setString(9, row.owner());
      ps.setLong(10, claimed ? 1 : 0);
      if (claimed) {
        ps.setLong(11, row.leaseExpiresAt());
      } else {
        ps.setNull(11, Types.BIGINT);
      }
      ps.setLong(12, row.createdAt());
      ps.setLong(13, row.createdAt());
      ps.setInt(14, row.queued() ? 1 : 0);
    }, ps -> {
      try {
        return ps.executeUpdate() == 1;
      } catch (SQLException e) {
        if ("23505".equals(e.getSQLState())) {
          return false; // H2 has no ON CONFLICT outside its PostgreSQL mode: the key exists
        }
        throw e;
      }
    });
  }

  /** Reads one row, or null, with an optional locking clause. */
  public RawRow select(SqlSession c, OperationId id, String lockClause) throws SQLException {
    return selectRow(c, "SELECT " + COLUMNS + " FROM idem_operation" + BY_ID
        + (lockClause == null ? "" : lockClause), id);
  }

  /**
   * Reads one row without its {@code request_json} (the returned row's is null): for a write whose
   * caller already knows the request ({@link RequestMemo}), so that SQLite does not copy a request
   * of up to a megabyte out of the page cache only to have it parsed and dropped.
   */
  public RawRow selectWithoutRequest(SqlSession c, OperationId id) throws SQLException {
    return selectRow(c, "SELECT " + COLUMNS_WITHOUT_REQUEST + " FROM idem_operation" + BY_ID, id);
  }

  /** Runs a one-row select by id whose columns {@link #read} understands; null if there is no row. */
  private RawRow selectRow(SqlSession c, String sql, OperationId id) throws SQLException {
    List<RawRow> rows = rows(c, sql, ps -> bindId(ps, 1, id));
    return rows.isEmpty() ? null : rows.get(0);
  }

  /** Reads one row for a read-modify-write (PostgreSQL: {@code FOR UPDATE}, waiting for other writers). */
  public RawRow selectForUpdate(SqlSession c, OperationId id) throws SQLException {
    return select(c, id, dialect.lockForUpdate());
  }

  /**
   * Reads only the columns that fence a write (state, owner, generation, lease, quarantine, queued),
   * and {@code attempts_json} if asked, with {@code lockClause}; the other columns of the returned
   * row are null or 0. Cheaper than {@link #select}: the request and response JSON stay unread.
   */
  private RawRow selectHead(SqlSession c, OperationId id, boolean withAttempts, String lockClause)
      throws SQLException {
    return run(c, "SELECT state, owner, generation, lease_expires_at, quarantined_at, quarantine_reason, queued"
        + (withAttempts ? ", attempts_json" : "") + " FROM idem_operation" + BY_ID + lockClause,
        ps -> bindId(ps, 1, id), ps -> {
          try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
              return null;
            }
            return new RawRow(id.scope(), id.operation(), id.key().value(), null, null, null, rs.getString(1),
                rs.getString(2), rs.getLong(3), nullableLong(rs, 4), null, 0, 0,
                withAttempts ? rs.getString(8) : null, null, null, nullableLong(rs, 5), rs.getString(6), null,
                rs.getInt(7) == 1, null);
          }
        });
  }

  /**
   * Reads the fencing columns and {@code attempts_json} of a row for a read-modify-write by its
   * holder (see {@link #selectHead}); PostgreSQL locks it {@code FOR UPDATE}.
   */
  public RawRow selectAttemptsForUpdate(SqlSession c, OperationId id) throws SQLException {
    return selectHead(c, id, true, dialect.lockForUpdate());
  }

  /**
   * Reads the fencing columns and attempts of a row to claim it (see {@link #selectHead}); on
   * PostgreSQL skips it
   * (returns null) if another node holds its lock.
   */
  public RawRow selectForClaim(SqlSession c, OperationId id) throws SQLException {
    return selectHead(c, id, true, dialect.lockForClaim());
  }

  /**
   * Reads the fencing columns and attempts of a row to claim it, as {@link #selectForClaim} does,
   * but waits up to {@code wait} for another transaction's lock on it (PostgreSQL {@code FOR UPDATE}
   * under a {@code lock_timeout} set for this transaction only), for the claim of one named row: the
   * lock it meets is most often another instance's due-page read ({@code FOR UPDATE SKIP LOCKED}),
   * held for milliseconds, which is no holder of the operation. The wait runs in a savepoint, so
   * that a lock not granted in time leaves the transaction usable; a statement cancelled by the app's
   * own {@code statement_timeout} before the wait was over counts as a lock not granted. PostgreSQL
   * only.
   *
   * @return the row, locked; or null if its lock was not granted within {@code wait} (or within the
   *     connection's {@code statement_timeout}, if shorter)
   */
  public RawRow selectForClaimWaiting(SqlSession c, OperationId id, java.time.Duration wait) throws SQLException {
    java.sql.Connection connection = c.connection();
    java.sql.Savepoint savepoint = connection.setSavepoint();
    try {
      try (PreparedStatement ps = connection.prepareStatement("SELECT set_config('lock_timeout', ?, true)")) {
        ps.setString(1, Math.max(1, wait.toMillis()) + "ms");
        ps.executeQuery().close();
      }
      RawRow row = selectHead(c, id, true, dialect.lockForUpdate());
      connection.releaseSavepoint(savepoint);
      return row;
    } catch (SQLException e) {
      // Our lock_timeout (55P03), or the app's own statement_timeout shorter than the wait (57014, set on
      // its role, database or pool): either way the lock was not granted in the time allowed, which is
      // "not claimable now", not a failure of the journal.
      if (!dialect.isLockWaitOver(e)) {
        throw e;
      }
      connection.rollback(savepoint); // the transaction goes on; lock_timeout reverts with the savepoint
      return null;
    }
  }

  /**
   * PostgreSQL's own clock, now ({@code clock_timestamp()}, not the transaction's start), in
   * nanoseconds since the epoch as the instants of this table are stored (to the microsecond, the
   * database's precision). PostgreSQL only.
   */
  public long databaseNanos(SqlSession c) throws SQLException {
    Long micros = scalar(c, "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)", ps -> { });
    return Math.multiplyExact(micros, 1000L);
  }

  /** True if the identity exists at all. */
  public boolean exists(SqlSession c, OperationId id) throws SQLException {
    return scalar(c, "SELECT 1 FROM idem_operation" + BY_ID, ps -> bindId(ps, 1, id)) != null;
  }

  /**
   * Claims a row read at {@code expectedState} and {@code expectedGeneration}. Its attempts stay as
   * they are: a takeover's ambiguous attempt is core's rule, recorded through {@link #updateAttempts}.
   *
   * @return false if it changed in between
   */
  public boolean claim(SqlSession c, OperationId id, String expectedState, long expectedGeneration, String owner,
      long newGeneration, long leaseExpiresAt, long now) throws SQLException {
    return updatesOne(c, "UPDATE idem_operation SET state = 'IN_FLIGHT', owner = ?,"
        + " generation = ?, lease_expires_at = ?, next_attempt_at = NULL, updated_at = ?, response_json = NULL,"
        + " reason = NULL" + BY_ID + " AND state = ? AND generation = ? AND quarantined_at IS NULL", ps -> {
          ps.setString(1, owner);
          ps.setLong(2, newGeneration);
          ps.setLong(3, leaseExpiresAt);
          ps.setLong(4, now);
          bindId(ps, 5, id);
          ps.setString(8, expectedState);
          ps.setLong(9, expectedGeneration);
        });
  }

  /**
   * The first claim of an inline operation (PENDING, generation 0, not queued, not quarantined) in
   * one statement, reading nothing: the claim the executor makes right after its begin. Anything
   * else matches nothing, and the caller takes the general path ({@link #selectForClaim}). Only
   * on one connection (SQLite, H2): on PostgreSQL an UPDATE would wait for a row another node is
   * claiming, which a claim must skip instead ({@code SKIP LOCKED}), so there it claims nothing.
   *
   * @return true if it claimed the row (now IN_FLIGHT at generation 1)
   */
  public boolean claimFirstInline(SqlSession c, OperationId id, String owner, long leaseExpiresAt, long now)
      throws SQLException {
    if (!dialect.lockForClaim().isEmpty()) {
      return false;
    }
    return updatesOne(c, "UPDATE idem_operation SET state = 'IN_FLIGHT', owner = ?, generation = 1,"
        + " lease_expires_at = ?, next_attempt_at = NULL, updated_at = ?, response_json = NULL, reason = NULL"
        + BY_ID + " AND state = 'PENDING' AND generation = 0 AND queued = 0 AND quarantined_at IS NULL", ps -> {
          ps.setString(1, owner);
          ps.setLong(2, leaseExpiresAt);
          ps.setLong(3, now);
          bindId(ps, 4, id);
        });
  }

  /**
   * Replaces the attempts of an IN_FLIGHT row, fenced by owner and generation.
   *
   * @return false if the fence did not match (stale owner)
   */
  public boolean updateAttempts(SqlSession c, OperationId id, String owner, long generation, String attemptsJson,
      long updatedAt) throws SQLException {
    return updatesOne(c, "UPDATE idem_operation SET attempts_json = ?, updated_at = ?" + BY_ID + HELD, ps -> {
      ps.setString(1, attemptsJson);
      ps.setLong(2, updatedAt);
      bindHeld(ps, 3, id, generation, owner);
    });
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
  public boolean transitionFenced(SqlSession c, OperationId id, String owner, long generation, Change ch)
      throws SQLException {
    return updatesOne(c, CHANGE + BY_ID + HELD, ps -> bindHeld(ps, bindChange(ps, ch), id, generation, owner));
  }

  /**
   * Appends one encoded attempt to {@code attempts_json} and moves an IN_FLIGHT row held by owner
   * and generation, in one statement that reads nothing back: the executor ends every attempt with
   * a transition, and the journal knows both. The append is textual ({@code [a]} becomes
   * {@code [a,b]}), which is what {@link RecordCodec#appendAttempt} produces for a well-formed list;
   * a malformed list stays malformed, and the next read quarantines the row as before.
   *
   * @return false if the fence did not match (stale owner, quarantined, or not IN_FLIGHT)
   */
  public boolean appendAttemptAndTransition(SqlSession c, OperationId id, String owner, long generation,
      String attemptJson, Change ch) throws SQLException {
    // The attempt is bound once (it was bound in each branch of a CASE: twice the UTF-8 copy).
    return updatesOne(c, CHANGE + ", attempts_json = SUBSTR(attempts_json, 1, LENGTH(attempts_json) - 1)"
        + " || CASE WHEN attempts_json = '[]' THEN '' ELSE ',' END || ? || ']'"
        + BY_ID + HELD + " AND quarantined_at IS NULL", ps -> {
          int i = bindChange(ps, ch);
          ps.setString(i, attemptJson);
          bindHeld(ps, i + 1, id, generation, owner);
        });
  }

  /**
   * Moves a row that nobody holds (abandon, re-drive), if it is still as read.
   *
   * @return false if it changed in between
   */
  public boolean transitionUnheld(SqlSession c, OperationId id, String expectedState, long expectedGeneration,
      Change ch) throws SQLException {
    return updatesOne(c, CHANGE + BY_ID + " AND state = ? AND generation = ?", ps -> {
      int i = bindChange(ps, ch);
      bindId(ps, i, id);
      ps.setString(i + 3, expectedState);
      ps.setLong(i + 4, expectedGeneration);
    });
  }

  /**
   * A re-drive of a row still in {@code expectedState} at {@code expectedGeneration}:
   * {@link #transitionUnheld}, with {@code created_at}, from which the age limit of queued delivery
   * counts, moved to the re-drive ({@code ch}'s update time) if {@code restartAge}; the caller
   * decides it from the attempts of the row it read under its lock (see {@code Journal.redrive}).
   *
   * @return false if it changed in between
   */
  public boolean redriveUnheld(SqlSession c, OperationId id, String expectedState, long expectedGeneration,
      Change ch, boolean restartAge) throws SQLException {
    if (!restartAge) {
      return transitionUnheld(c, id, expectedState, expectedGeneration, ch);
    }
    return updatesOne(c, CHANGE + ", created_at = ?" + BY_ID + " AND state = ? AND generation = ?", ps -> {
      int i = bindChange(ps, ch);
      ps.setLong(i, ch.updatedAt());
      bindId(ps, i + 1, id);
      ps.setString(i + 4, expectedState);
      ps.setLong(i + 5, expectedGeneration);
    });
  }

  /**
   * Settles an UNCERTAIN row still at {@code expectedGeneration} (reconciliation), in one
   * statement: the change, and the owner and generation the claim of a settlement through re-drive,
   * claim and transition wrote, so that the row never passes through a state a resume sends.
   * {@code created_at} is kept: a settlement sends nothing, so no age limit is at stake, and the
   * creation time orders listings.
   *
   * @return false if it changed in between, or is quarantined
   */
  public boolean settleUncertain(SqlSession c, OperationId id, long expectedGeneration, String owner, Change ch)
      throws SQLException {
    return updatesOne(c, CHANGE + ", owner = ?, generation = ?" + BY_ID
        + " AND state = 'UNCERTAIN' AND generation = ? AND quarantined_at IS NULL", ps -> {
          int i = bindChange(ps, ch);
          ps.setString(i, owner);
          ps.setLong(i + 1, expectedGeneration + 1);
          bindId(ps, i + 2, id);
          ps.setLong(i + 5, expectedGeneration);
        });
  }

  /**
   * Every state change clears {@code outcome_delivered_at}: only a terminal row has one, and the
   * only change out of a terminal state is a re-drive, whose next outcome is a new one.
   */
  private static final String CHANGE = "UPDATE idem_operation SET state = ?, lease_expires_at = NULL,"
      + " next_attempt_at = ?, updated_at = ?, response_json = ?, reason = ?, outcome_delivered_at = NULL";
  /** The fence of a write by the holder of a lease: {@link #bindHeld} binds it after the identity. */
  private static final String HELD = " AND state = 'IN_FLIGHT' AND generation = ? AND owner = ?";

  private static void bindHeld(PreparedStatement ps, int i, OperationId id, long generation, String owner)
      throws SQLException {
    bindId(ps, i, id);
    ps.setLong(i + 3, generation);
    ps.setString(i + 4, owner);
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
    ps.setString(5, storedReason(ch.reason()));
    return 6;
  }

  /** One page of rows due at {@code now}, after {@code after}, in identity order. */
  public List<RawRow> due(SqlSession c, long now, RowKey after, int limit) throws SQLException {
    return pageRows(c, "SELECT " + COLUMNS + " FROM idem_operation WHERE quarantined_at IS NULL AND " + DUE_NOW
        + (after == null ? "" : AFTER) + ORDER + " LIMIT ?" + dialect.lockForClaim(), ps -> {
          ps.setLong(1, now);
          ps.setLong(2, now);
          ps.setInt(bindAfter(ps, 3, after), limit);
        });
  }

  /**
   * SQLite: {@code INDEXED BY index}, so that a read meant to walk a partial index does walk it.
   * SQLite keeps no statistics unless ANALYZE ran (the journal never runs it), and without them its
   * planner takes {@code state IN (...)} for a selective term: it read every unfinished row through
   * {@code idem_operation_state_updated} and sorted them for each page of the due order (33 ms a
   * page with 60,000 due, against 0.2 ms through {@code idem_operation_due}; issue 28, P4), and
   * every finished row to find the few owed outcomes. A missing index then fails the statement
   * instead of letting it scan; the migrations create both. Elsewhere: nothing (PostgreSQL keeps
   * statistics; H2 has no such index).
   */
  private String indexedBy(String index) {
    return dialect == Dialect.SQLITE ? " INDEXED BY " + index : "";
  }

  /** Due at a time bound twice: PENDING and due, or IN_FLIGHT with an expired lease. */
  private static final String DUE_NOW = "((state = 'PENDING' AND (next_attempt_at IS NULL OR next_attempt_at <= ?))"
      + " OR (state = 'IN_FLIGHT' AND (lease_expires_at IS NULL OR lease_expires_at <= ?)))";

  /**
   * When an unfinished row became due, in nanoseconds: its lease expiry if IN_FLIGHT, else its
   * next attempt; its last change if it has neither. The expression of the index
   * {@code idem_operation_due} (PostgreSQL, SQLite), word for word, so that the planner walks that
   * index in this order instead of sorting every due row for each page.
   */
  static final String DUE_AT = "(CASE WHEN state = 'IN_FLIGHT' THEN COALESCE(lease_expires_at, updated_at)"
      + " ELSE COALESCE(next_attempt_at, updated_at) END)";
  /** The predicate of {@code idem_operation_due}, word for word. */
  private static final String UNFINISHED = "state IN ('PENDING', 'IN_FLIGHT') AND quarantined_at IS NULL";

  /** {@link #DUE_AT} of a stored row, computed as the query computes it. */
  public static long dueAt(RawRow r) {
    Long at = "IN_FLIGHT".equals(r.state()) ? r.leaseExpiresAt() : r.nextAttemptAt();
    return at == null ? r.updatedAt() : at;
  }

  /**
   * The first part of the due order of the journal SPI's {@code findDue(now, owner, after, limit)}:
   * the rows IN_FLIGHT under {@code owner}'s own live lease, after {@code after}, in identity order.
   * Few (what one instance held), read through the state index.
   */
  public List<RawRow> ownLeases(SqlSession c, long now, String owner, RowKey after, int limit) throws SQLException {
    return ownLeases(c, now, owner, null, after, limit);
  }

  /**
   * {@link #ownLeases(SqlSession, long, String, RowKey, int)} of the operations named one of
   * {@code names} ({@link #MAX_NAMES} at most), or of every name if it is null.
   */
  public List<RawRow> ownLeases(SqlSession c, long now, String owner, List<String> names, RowKey after, int limit)
      throws SQLException {
    return pageRows(c, "SELECT " + COLUMNS + " FROM idem_operation WHERE state = 'IN_FLIGHT' AND quarantined_at IS NULL"
        + " AND owner = ? AND lease_expires_at > ?" + namedOneOf(names)
        + (after == null ? "" : " AND (scope, operation, op_key) > (?, ?, ?)")
        + ORDER + " LIMIT ?" + dialect.lockForClaim(), ps -> {
          ps.setString(1, owner);
          ps.setLong(2, now);
          ps.setInt(bindRowKey(ps, bindNames(ps, 3, names), after), limit);
        });
  }

  /**
   * The most names a due read filters on in its query ({@code operation IN (...)}); a caller with
   * more filters the rows it reads.
   */
  public static final int MAX_NAMES = 64;

  private String namedOneOf(List<String> names) {
    if (names == null) {
      return "";
    }
    if (names.isEmpty() || names.size() > MAX_NAMES) {
      throw new IllegalArgumentException("1 to " + MAX_NAMES + " names: " + names.size());
    }
    // SQLite: "+operation", so that the names are compared on the index's entries and not taken
    // for an equality on the index's third column, which with one name made it sort each page
    // (USE TEMP B-TREE FOR LAST TERM OF ORDER BY). PostgreSQL has no unary plus on text.
    return " AND " + (dialect == Dialect.SQLITE ? "+operation" : "operation") + " IN (?"
        + ", ?".repeat(names.size() - 1) + ")";
  }

  private static int bindNames(PreparedStatement ps, int i, List<String> names) throws SQLException {
    if (names != null) {
      for (String n : names) {
        ps.setString(i++, n);
      }
    }
    return i;
  }

  /**
   * The second part: the rows due at {@code now} that nobody holds (PENDING and due, IN_FLIGHT
   * with an expired lease), oldest due first ({@link #DUE_AT}), then identity; after the place
   * ({@code afterDueAt}, {@code after}), or from the start if {@code after} is null.
   */
  public List<RawRow> dueOldestFirst(SqlSession c, long now, long afterDueAt, RowKey after, int limit)
      throws SQLException {
    return dueOldestFirst(c, now, null, afterDueAt, after, limit);
  }

  /**
   * {@link #dueOldestFirst(SqlSession, long, long, RowKey, int)} of the operations named one of
   * {@code names} ({@link #MAX_NAMES} at most), or of every name if it is null. The names are
   * compared on the index's entries (the name is in it), so another name's backlog costs an index
   * walk in the database, not rows read and decoded here.
   */
  public List<RawRow> dueOldestFirst(SqlSession c, long now, List<String> names, long afterDueAt, RowKey after,
      int limit) throws SQLException {
    String sql = "SELECT " + COLUMNS + " FROM idem_operation" + indexedBy("idem_operation_due") + " WHERE " + UNFINISHED
        + " AND " + DUE_NOW + namedOneOf(names)
        // The first comparison is implied by the second; it is there so that SQLite seeks the index
        // to the cursor (it cannot from a row value alone, and walked it from its start: 97 ms for a
        // page 180,000 rows in, against under 1 ms).
        + (after == null ? "" : " AND " + DUE_AT + " >= ? AND (" + DUE_AT + ", scope, operation, op_key) > (?, ?, ?, ?)")
        + " ORDER BY " + DUE_AT + ", scope, operation, op_key LIMIT ?" + dialect.lockForClaim();
    return pageRows(c, sql, ps -> {
      ps.setLong(1, now);
      ps.setLong(2, now);
      int i = bindNames(ps, 3, names);
      if (after != null) {
        ps.setLong(i++, afterDueAt);
        ps.setLong(i++, afterDueAt);
      }
      ps.setInt(bindRowKey(ps, i, after), limit);
    });
  }

  /**
   * Records that the outcome of a terminal row was delivered, unless one was already recorded;
   * {@code updated_at} stays (retention counts from the terminal transition).
   *
   * @return true if this call recorded it
   */
  public boolean markOutcomeDelivered(SqlSession c, OperationId id, long at) throws SQLException {
    return updatesOne(c, "UPDATE idem_operation SET outcome_delivered_at = ?" + BY_ID
        + " AND " + IS_TERMINAL + " AND outcome_delivered_at IS NULL AND quarantined_at IS NULL", ps -> {
          ps.setLong(1, at);
          bindId(ps, 2, id);
        });
  }

  /**
   * One page of queued, terminal rows whose outcome nobody was recorded as having received, after
   * {@code after}, in identity order. The conditions repeat those of the partial index
   * {@code idem_operation_undelivered} (SQLite, PostgreSQL) word for word, so that the planner
   * reads it instead of every finished row. On SQLite the statement names it ({@link #indexedBy}):
   * without it SQLite read every finished row through {@code idem_operation_state_updated}; there
   * the index holds only the rows this returns (schema version 4), and its condition on the state
   * is {@link #IS_TERMINAL} (version 5).
   */
  public List<RawRow> undelivered(SqlSession c, RowKey after, int limit) throws SQLException {
    return pageRows(c, "SELECT " + COLUMNS + " FROM idem_operation" + indexedBy("idem_operation_undelivered")
        + " WHERE queued = 1 AND outcome_delivered_at IS NULL"
        + " AND " + IS_TERMINAL + " AND quarantined_at IS NULL" + (after == null ? "" : AFTER) + ORDER
        + " LIMIT ?", ps -> ps.setInt(bindAfter(ps, 1, after), limit));
  }

  /** One page of rows in a state, after {@code after}, in identity order. */
  public List<RawRow> inState(SqlSession c, OperationState state, RowKey after, int limit) throws SQLException {
    return inState(c, COLUMNS, state, null, after, limit);
  }

  /**
   * {@link #inState(SqlSession, OperationState, RowKey, int)} of the operations named one of
   * {@code names} ({@link #MAX_NAMES} at most). Without a lock, as that read: a row another
   * process holds locked is in the page.
   *
   * <p>On SQLite the PENDING rows are read through {@code idem_operation_due}, whose entries hold
   * the names, so that the names are compared there and only the rows of these names are looked up
   * (and sorted by identity). Through {@code idem_operation_state_updated}, which the read of every
   * name walks, each PENDING row is looked up in the table to compare its name: a page took 100 ms
   * behind 100,000 PENDING rows of another name (a backlog waiting for its target), against 6 ms.
   * The IN_FLIGHT rows are few (the attempts on the wire, and leases a stopped process left): they
   * are read through the state index, and not by walking every unfinished row's entry.
   */
  public List<RawRow> inState(SqlSession c, OperationState state, List<String> names, RowKey after, int limit)
      throws SQLException {
    return inState(c, COLUMNS, state, Objects.requireNonNull(names, "names"), after, limit);
  }

  /**
   * {@link #inState} without the request and the stored response (the returned rows' are null), so
   * that a page of a listing takes memory for identities and attempts, never for bodies.
   */
  public List<RawRow> summariesInState(SqlSession c, OperationState state, RowKey after, int limit)
      throws SQLException {
    return inState(c, COLUMNS_WITHOUT_BODIES, state, null, after, limit);
  }

  /** @param names as {@link #namedOneOf}: null for every name */
  private List<RawRow> inState(SqlSession c, String columns, OperationState state, List<String> names, RowKey after,
      int limit) throws SQLException {
    // PENDING of some names on SQLite: see the public overload. The UNFINISHED predicate, word for
    // word, so that SQLite may walk the partial due index.
    String where = names != null && dialect == Dialect.SQLITE && state == OperationState.PENDING
        ? indexedBy("idem_operation_due") + " WHERE " + UNFINISHED + " AND"
        : " WHERE quarantined_at IS NULL AND";
    return pageRows(c, "SELECT " + columns + " FROM idem_operation" + where + " state = ?"
        + namedOneOf(names) + (after == null ? "" : AFTER) + ORDER + " LIMIT ?", ps -> {
          ps.setString(1, state.name());
          ps.setInt(bindAfter(ps, bindNames(ps, 2, names), after), limit);
        });
  }

  /** Rows of a scope with a reference, oldest first. */
  public List<RawRow> byReference(SqlSession c, String scope, String reference) throws SQLException {
    return rows(c, "SELECT " + COLUMNS + " FROM idem_operation"
        + " WHERE scope = ? AND reference = ? AND quarantined_at IS NULL ORDER BY created_at, operation, op_key", ps -> {
          ps.setString(1, scope);
          ps.setString(2, reference);
        });
  }

  /** The number of rows, quarantined ones included. */
  public long countAll(SqlSession c) throws SQLException {
    return scalar(c, "SELECT COUNT(*) FROM idem_operation", ps -> { });
  }

  /**
   * Rows a dead process may have left on the wire ({@link CrashRecovery}): IN_FLIGHT ones, and,
   * after a crash, inline PENDING ones never durably claimed. (A queued row's first claim is
   * durable, so a queued row at generation 0 was never claimed, and never sent.) Settled rows no
   * longer match, so each call returns the next page. Without the request and the stored response
   * (the returned rows' are null), which a settlement neither reads nor keeps: a page of 500 whole
   * rows of large requests ran out of a small heap in the open after a crash, at every restart.
   */
  public List<RawRow> inDoubt(SqlSession c, boolean neverClaimedToo, int limit) throws SQLException {
    return rows(c, "SELECT " + COLUMNS_WITHOUT_BODIES + " FROM idem_operation WHERE quarantined_at IS NULL AND"
        + " (state = 'IN_FLIGHT' OR (? = 1 AND state = 'PENDING' AND generation = 0 AND queued = 0))" + ORDER
        + " LIMIT ?", ps -> {
          ps.setInt(1, neverClaimedToo ? 1 : 0);
          ps.setInt(2, limit);
        });
  }

  /**
   * Moves a row found in doubt back to PENDING, due now, with its attempts and generation as
   * settled; like a transition to PENDING, it keeps the owner for the record.
   */
  public Void settleInDoubt(SqlSession c, RawRow r, long generation, String attemptsJson, long now, String reason)
      throws SQLException {
    updatesOne(c, "UPDATE idem_operation SET state = 'PENDING', lease_expires_at = NULL,"
        + " next_attempt_at = ?, generation = ?, attempts_json = ?, updated_at = ?, response_json = NULL, reason = ?"
        + " WHERE scope = ? AND operation = ? AND op_key = ? AND state = ? AND generation = ?", ps -> {
          ps.setLong(1, now);
          ps.setLong(2, generation);
          ps.setString(3, attemptsJson);
          ps.setLong(4, now);
          ps.setString(5, storedReason(reason));
          bindRowKey(ps, 6, rowKey(r));
          ps.setString(9, r.state());
          ps.setLong(10, r.generation());
        });
    return null;
  }

  /** The number of unquarantined rows in a state: one query (for gauges). */
  public long countInState(SqlSession c, OperationState state) throws SQLException {
    return scalar(c, "SELECT COUNT(*) FROM idem_operation WHERE state = ? AND quarantined_at IS NULL",
        ps -> ps.setString(1, state.name()));
  }

  /** The oldest creation time (nanoseconds) of the unquarantined rows in a state, or null: one query. */
  public Long oldestCreatedAt(SqlSession c, OperationState state) throws SQLException {
    return scalar(c, "SELECT MIN(created_at) FROM idem_operation WHERE state = ? AND quarantined_at IS NULL",
        ps -> ps.setString(1, state.name()));
  }

  /** Rows whose state is none of the known ones and that are not yet quarantined. */
  public List<RawRow> unknownStates(SqlSession c, int limit) throws SQLException {
    StringBuilder in = new StringBuilder();
    for (OperationState s : OperationState.values()) {
      in.append(in.length() == 0 ? "" : ", ").append('\'').append(s.name()).append('\'');
    }
    return rows(c, "SELECT " + COLUMNS + " FROM idem_operation"
        + " WHERE quarantined_at IS NULL AND state NOT IN (" + in + ")" + ORDER + " LIMIT ?", ps -> ps.setInt(1, limit));
  }

  /** Flags a row as quarantined. */
  public void quarantine(SqlSession c, String scope, String operation, String key, long at, String reason)
      throws SQLException {
    updatesOne(c, "UPDATE idem_operation SET quarantined_at = ?,"
        + " quarantine_reason = ? WHERE scope = ? AND operation = ? AND op_key = ? AND quarantined_at IS NULL", ps -> {
          ps.setLong(1, at);
          ps.setString(2, storedText(reason, MAX_QUARANTINE_REASON));
          bindRowKey(ps, 3, new RowKey(scope, operation, key));
        });
  }

  /** Quarantined rows, oldest quarantine first. */
  public List<RawRow> quarantined(SqlSession c, int limit) throws SQLException {
    return rows(c, "SELECT " + COLUMNS + " FROM idem_operation"
        + " WHERE quarantined_at IS NOT NULL ORDER BY quarantined_at, scope, operation, op_key LIMIT ?",
        ps -> ps.setInt(1, limit));
  }

  /**
   * Deletes at most {@code limit} terminal, unquarantined rows last updated before {@code before}
   * (nanoseconds) whose outcome no handler is owed (not queued, or a delivery recorded: the next
   * resume hands an owed one over, so it stays): one batch of a purge. The owed rows are left out
   * of the SELECT, not skipped after it, so that a batch full of them does not end the purge. It selects the rows through the index on (state,
   * updated_at), locked for this transaction (PostgreSQL: rows another process has locked are
   * skipped, left for a later purge; H2: the store's lock already excludes every other writer),
   * then deletes them by primary key. A DELETE that repeated the conditions had H2 walk that index
   * again for each row; neither database offers a limited DELETE that the other accepts.
   */
  public Purged purge(SqlSession c, long before, int limit) throws SQLException {
    String condition = "state IN " + TERMINAL + " AND updated_at < ? AND quarantined_at IS NULL"
        + " AND (queued = 0 OR outcome_delivered_at IS NOT NULL)";
    List<RowKey> keys = new ArrayList<>();
    PreparedStatement select = c.prepare("SELECT scope, operation, op_key FROM idem_operation WHERE " + condition
        + " LIMIT ?" + dialect.lockForClaim());
    try {
      select.setLong(1, before);
      select.setInt(2, limit);
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          keys.add(new RowKey(rs.getString(1), rs.getString(2), rs.getString(3)));
        }
      }
    } finally {
      c.release(select);
    }
    if (keys.isEmpty()) {
      return new Purged(0, 0);
    }
    PreparedStatement delete = c.prepare("DELETE FROM idem_operation WHERE scope = ? AND operation = ? AND op_key = ?");
    try {
      for (RowKey k : keys) {
        bindRowKey(delete, 1, k);
        delete.addBatch();
      }
      int deleted = 0;
      for (int n : delete.executeBatch()) {
        deleted += n == Statement.SUCCESS_NO_INFO ? 1 : n;
      }
      return new Purged(keys.size(), deleted);
    } finally {
      c.release(delete);
    }
  }

  /** How many rows one batch of a purge found, and how many of them it deleted. */
  public record Purged(int found, int deleted) {
  }

  /** Binds the parameters of one statement. */
  private interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  /** What is done with a bound statement. */
  private interface Use<T> {
    T apply(PreparedStatement ps) throws SQLException;
  }

  /** Prepares (from the session's cache), binds, uses and releases one statement. */
  private static <T> T run(SqlSession c, String sql, Binder binder, Use<T> use) throws SQLException {
    PreparedStatement ps = c.prepare(sql);
    try {
      binder.bind(ps);
      return use.apply(ps);
    } finally {
      c.release(ps);
    }
  }

  /** Runs a query whose columns {@link #read} understands. */
  private static List<RawRow> rows(SqlSession c, String sql, Binder binder) throws SQLException {
    return run(c, sql, binder, ps -> {
      List<RawRow> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(read(rs));
        }
      }
      return rows;
    });
  }

  /**
   * Runs a query of one page's rows, as {@link #rows} does, but stops taking rows once those taken
   * hold {@link #PAGE_READ_CHARS} of stored text: the rows after it are never copied out of the
   * database (SQLite steps to a row only when asked). At least one row, however large.
   */
  private static List<RawRow> pageRows(SqlSession c, String sql, Binder binder) throws SQLException {
    return run(c, sql, binder, ps -> {
      List<RawRow> rows = new ArrayList<>();
      long chars = 0;
      try (ResultSet rs = ps.executeQuery()) {
        while (chars < PAGE_READ_CHARS && rs.next()) {
          RawRow r = read(rs);
          rows.add(r);
          chars += storedChars(r);
        }
      }
      return rows;
    });
  }

  /**
   * Whether a paged read asked for {@code asked} rows and got {@code rows} because no more rows
   * match, rather than because it stopped at {@link #PAGE_READ_CHARS}: the caller pages on from
   * the last row unless this is true.
   */
  public static boolean lastRows(List<RawRow> rows, int asked) {
    return rows.size() < asked && storedChars(rows) < PAGE_READ_CHARS;
  }

  /**
   * The characters of the columns of {@code rows} whose size follows their bodies and attempts: what
   * a paged read counts against {@link #PAGE_READ_CHARS}.
   */
  public static long storedChars(List<RawRow> rows) {
    long chars = 0;
    for (RawRow r : rows) {
      chars += storedChars(r);
    }
    return chars;
  }

  /** The characters of a row's columns whose size follows its bodies and attempts. */
  private static long storedChars(RawRow r) {
    return length(r.requestJson()) + length(r.responseJson()) + length(r.attemptsJson());
  }

  private static long length(String s) {
    return s == null ? 0 : s.length();
  }

  /** Runs a query of one number: its first row's first column, or null (no row, or SQL NULL). */
  private static Long scalar(SqlSession c, String sql, Binder binder) throws SQLException {
    return run(c, sql, binder, ps -> {
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? nullableLong(rs, 1) : null;
      }
    });
  }

  /** Runs an UPDATE; true if it changed exactly one row. */
  private static boolean updatesOne(SqlSession c, String sql, Binder binder) throws SQLException {
    return run(c, sql, binder, ps -> ps.executeUpdate() == 1);
  }

  /** Binds a row's identity as stored, if there is one; returns the next parameter's index. */
  private static int bindRowKey(PreparedStatement ps, int i, RowKey k) throws SQLException {
    if (k == null) {
      return i;
    }
    ps.setString(i, k.scope());
    ps.setString(i + 1, k.operation());
    ps.setString(i + 2, k.key());
    return i + 3;
  }

  /** The identity of a row as stored. */
  public static RowKey rowKey(RawRow r) {
    return new RowKey(r.scope(), r.operation(), r.key());
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

  /** Reads a row selected with {@link #COLUMNS}, by position (a lookup by name costs more than the read). */
  private static RawRow read(ResultSet rs) throws SQLException {
    return new RawRow(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
        rs.getString(6), rs.getString(7), rs.getString(8), rs.getLong(9), nullableLong(rs, 10),
        nullableLong(rs, 11), rs.getLong(12), rs.getLong(13), rs.getString(14), rs.getString(15),
        rs.getString(16), nullableLong(rs, 17), rs.getString(18), rs.getString(19), rs.getInt(20) == 1,
        nullableLong(rs, 21));
  }

  private static Long nullableLong(ResultSet rs, int column) throws SQLException {
    long v = rs.getLong(column);
    return rs.wasNull() ? null : v;
  }

  /**
   * A reason as the reason column holds it ({@link StoredText}: each NUL as U+FFFD, since
   * PostgreSQL refuses one and a reason may carry a server's bytes), at most {@link #MAX_REASON}
   * characters, "..." where it was cut.
   */
  public static String storedReason(String reason) {
    return storedText(reason, MAX_REASON);
  }

  /** Free text as the journal stores it ({@link StoredText}), cut with a "..." marker. */
  static String storedText(String s, int max) {
    return StoredText.of(s, max, "...");
  }
}
