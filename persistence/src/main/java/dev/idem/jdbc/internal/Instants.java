package dev.idem.jdbc.internal;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;

/**
 * Instants as the journal stores them: BIGINT nanoseconds since the epoch. Exact (an instant read
 * back equals the one written), comparable in SQL, and the same in every dialect. The range is
 * 1677-09-21 to 2262-04-11.
 */
public final class Instants {
  private Instants() {
  }

  /**
   * @throws IllegalArgumentException if the instant is outside the storable range
   */
  public static long toNanos(Instant instant) {
    try {
      return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000_000L), instant.getNano());
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("instant " + instant + " is outside the journal's range (1677 to 2262)", e);
    }
  }

  public static Instant fromNanos(long nanos) {
    return Instant.ofEpochSecond(Math.floorDiv(nanos, 1_000_000_000L), Math.floorMod(nanos, 1_000_000_000L));
  }

  /** Binds an instant, or SQL NULL for null. */
  public static void bind(PreparedStatement ps, int index, Instant instant) throws SQLException {
    if (instant == null) {
      ps.setNull(index, Types.BIGINT);
    } else {
      ps.setLong(index, toNanos(instant));
    }
  }

  /** Reads a nullable BIGINT column as nanoseconds, or null. */
  public static Long nullableLong(ResultSet rs, String column) throws SQLException {
    long v = rs.getLong(column);
    return rs.wasNull() ? null : v;
  }

  /** Converts nullable nanoseconds to an instant. */
  public static Instant fromNullable(Long nanos) {
    return nanos == null ? null : fromNanos(nanos);
  }
}
