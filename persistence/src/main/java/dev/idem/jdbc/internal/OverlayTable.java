package dev.idem.jdbc.internal;

import dev.idem.core.OperationId;
import java.sql.SQLException;

/**
 * The table as a {@link LoggedStore}'s units of work see it: the single-row reads and writes of the
 * journal's hot path act on whole row images ({@link Rows}) instead of running SQL, with the same
 * conditions as the SQL's WHERE clauses, so that {@code JdbcJournal}'s logic is the same on every
 * store. Work that names no row runs on the database after the store has written every logged row
 * to it, and gets the inherited SQL.
 */
final class OverlayTable extends OperationTable {
  /** The rows of one unit of work: its own changes, then the store's logged rows, then the database. */
  interface Rows {
    /** The current row of {@code id}, or null. */
    RawRow get(OperationId id) throws SQLException;

    /** Replaces (or adds) a row; it is logged when the unit ends without throwing. */
    void put(RawRow row);
  }

  private static final String IN_FLIGHT = "IN_FLIGHT";

  OverlayTable() {
    super(Dialect.H2);
  }

  @Override
  public boolean insertIfAbsent(SqlSession c, NewRow row) throws SQLException {
    if (!(c instanceof Rows rows)) {
      return super.insertIfAbsent(c, row);
    }
    if (rows.get(row.id()) != null) {
      return false;
    }
    OperationId id = row.id();
    put(rows, new RawRow(id.scope(), id.operation(), id.key().value(), row.reference(), row.fingerprint(),
        row.requestJson(), "PENDING", null, 0, null, null, row.createdAt(), row.createdAt(), "[]", null, null, null,
        null));
    return true;
  }

  @Override
  public RawRow select(SqlSession c, OperationId id, String lockClause) throws SQLException {
    return c instanceof Rows rows ? rows.get(id) : super.select(c, id, lockClause);
  }

  @Override
  public RawRow selectForUpdate(SqlSession c, OperationId id) throws SQLException {
    return c instanceof Rows rows ? rows.get(id) : super.selectForUpdate(c, id);
  }

  @Override
  public RawRow selectAttemptsForUpdate(SqlSession c, OperationId id) throws SQLException {
    return c instanceof Rows rows ? rows.get(id) : super.selectAttemptsForUpdate(c, id);
  }

  @Override
  public RawRow selectForClaim(SqlSession c, OperationId id) throws SQLException {
    return c instanceof Rows rows ? rows.get(id) : super.selectForClaim(c, id);
  }

  @Override
  public boolean exists(SqlSession c, OperationId id) throws SQLException {
    return c instanceof Rows rows ? rows.get(id) != null : super.exists(c, id);
  }

  @Override
  public boolean claim(SqlSession c, OperationId id, String expectedState, long expectedGeneration, String owner,
      long newGeneration, long leaseExpiresAt, long now) throws SQLException {
    if (!(c instanceof Rows rows)) {
      return super.claim(c, id, expectedState, expectedGeneration, owner, newGeneration, leaseExpiresAt, now);
    }
    RawRow r = rows.get(id);
    if (r == null || !expectedState.equals(r.state()) || r.generation() != expectedGeneration
        || r.quarantinedAt() != null) {
      return false;
    }
    put(rows, new RawRow(r.scope(), r.operation(), r.key(), r.reference(), r.fingerprint(), r.requestJson(),
        IN_FLIGHT, owner, newGeneration, leaseExpiresAt, null, r.createdAt(), now, r.attemptsJson(), null, null,
        r.quarantinedAt(), r.quarantineReason()));
    return true;
  }

  @Override
  public boolean updateAttempts(SqlSession c, OperationId id, String owner, long generation, String attemptsJson,
      long updatedAt) throws SQLException {
    if (!(c instanceof Rows rows)) {
      return super.updateAttempts(c, id, owner, generation, attemptsJson, updatedAt);
    }
    RawRow r = rows.get(id);
    if (!heldBy(r, owner, generation)) {
      return false;
    }
    put(rows, new RawRow(r.scope(), r.operation(), r.key(), r.reference(), r.fingerprint(), r.requestJson(),
        r.state(), r.owner(), r.generation(), r.leaseExpiresAt(), r.nextAttemptAt(), r.createdAt(), updatedAt,
        attemptsJson, r.responseJson(), r.reason(), r.quarantinedAt(), r.quarantineReason()));
    return true;
  }

  @Override
  public boolean transitionFenced(SqlSession c, OperationId id, String owner, long generation, Change ch)
      throws SQLException {
    if (!(c instanceof Rows rows)) {
      return super.transitionFenced(c, id, owner, generation, ch);
    }
    RawRow r = rows.get(id);
    if (!heldBy(r, owner, generation)) {
      return false;
    }
    put(rows, changed(r, ch));
    return true;
  }

  @Override
  public boolean transitionUnheld(SqlSession c, OperationId id, String expectedState, long expectedGeneration,
      Change ch) throws SQLException {
    if (!(c instanceof Rows rows)) {
      return super.transitionUnheld(c, id, expectedState, expectedGeneration, ch);
    }
    RawRow r = rows.get(id);
    if (r == null || !expectedState.equals(r.state()) || r.generation() != expectedGeneration) {
      return false;
    }
    put(rows, changed(r, ch));
    return true;
  }

  /** Logs a row image, if every value fits its column (else fails as H2 would, before anything is logged). */
  private static void put(Rows rows, RawRow image) throws SQLException {
    ColumnLimits.check(image);
    rows.put(image);
  }

  private static boolean heldBy(RawRow r, String owner, long generation) {
    return r != null && IN_FLIGHT.equals(r.state()) && r.generation() == generation && owner.equals(r.owner());
  }

  private static RawRow changed(RawRow r, Change ch) {
    return new RawRow(r.scope(), r.operation(), r.key(), r.reference(), r.fingerprint(), r.requestJson(),
        ch.target().name(), r.owner(), r.generation(), null, ch.nextAttemptAt(), r.createdAt(), ch.updatedAt(),
        r.attemptsJson(), ch.responseJson(), cut(ch.reason()), r.quarantinedAt(), r.quarantineReason());
  }
}
