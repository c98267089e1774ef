package dev.idem.server;

import dev.idem.server.spi.IdempotencyStore;
import java.time.Duration;
import java.util.Objects;

/**
 * Which records an operator lists ({@link IdempotencyGuard#records}, {@link IdempotencyStore#records}):
 * by state, stuck or not, and by age, oldest claim first, at most {@link #limit()} of them.
 *
 * <pre>{@code
 * guard.records(RecordQuery.stuck());                                         // claims whose lease expired
 * guard.records(RecordQuery.inFlight().olderThan(Duration.ofMinutes(1)));     // slow handlers
 * guard.records(RecordQuery.state(RecordState.RELEASED).limit(1000));         // failed runs
 * }</pre>
 *
 * @param state only records in this state; null for any
 * @param stuckOnly only in-flight records whose lease has expired: their owner died or stalled, and
 *     the next request with the key (and the same payload) takes them over
 * @param olderThan only records claimed at least this long ago; zero for any age
 * @param limit the most records in one page, 1 to {@value #MAX_LIMIT}
 */
public record RecordQuery(RecordState state, boolean stuckOnly, Duration olderThan, int limit) {
  /** The default page size. */
  public static final int DEFAULT_LIMIT = 100;
  /** The largest page: the store reads at most this many rows for one query. */
  public static final int MAX_LIMIT = 1000;

  /**
   * Makes the record.
   *
   * @param state only records in this state; null for any
   * @param stuckOnly only in-flight records whose lease has expired
   * @param olderThan only records claimed at least this long ago; zero for any age
   * @param limit the most records in one page, 1 to {@value #MAX_LIMIT}
   * @throws NullPointerException if olderThan is null
   * @throws IllegalArgumentException if olderThan is negative, limit out of range, or stuckOnly
   *     with a state other than in flight
   */
  public RecordQuery {
    Objects.requireNonNull(olderThan, "olderThan");
    if (olderThan.isNegative()) {
      throw new IllegalArgumentException("olderThan must not be negative: " + olderThan);
    }
    if (limit < 1 || limit > MAX_LIMIT) {
      throw new IllegalArgumentException("limit must be 1 to " + MAX_LIMIT + ", not " + limit);
    }
    if (stuckOnly && state != null && state != RecordState.IN_FLIGHT) {
      throw new IllegalArgumentException("only in-flight records can be stuck, not " + state);
    }
  }

  /**
   * Every record, oldest claim first.
   *
   * @return the query
   */
  public static RecordQuery all() {
    return new RecordQuery(null, false, Duration.ZERO, DEFAULT_LIMIT);
  }

  /**
   * Records in one state.
   *
   * @param state the state
   * @return the query
   */
  public static RecordQuery state(RecordState state) {
    return new RecordQuery(Objects.requireNonNull(state, "state"), false, Duration.ZERO, DEFAULT_LIMIT);
  }

  /**
   * Records in flight, live or stuck.
   *
   * @return the query
   */
  public static RecordQuery inFlight() {
    return state(RecordState.IN_FLIGHT);
  }

  /**
   * In-flight records whose lease has expired.
   *
   * @return the query
   */
  public static RecordQuery stuck() {
    return new RecordQuery(RecordState.IN_FLIGHT, true, Duration.ZERO, DEFAULT_LIMIT);
  }

  /**
   * This query, for records claimed at least {@code age} ago.
   *
   * @param age zero or more
   * @return a copy
   */
  public RecordQuery olderThan(Duration age) {
    return new RecordQuery(state, stuckOnly, age, limit);
  }

  /**
   * This query, with another page size.
   *
   * @param limit 1 to {@value #MAX_LIMIT}
   * @return a copy
   */
  public RecordQuery limit(int limit) {
    return new RecordQuery(state, stuckOnly, olderThan, limit);
  }
}
