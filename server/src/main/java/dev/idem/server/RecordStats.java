package dev.idem.server;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * How many records a store holds, by state, at one moment: the numbers to watch and alert on
 * (seed 000: alert on stale processing rows rather than delete them silently).
 *
 * @param inFlight records in flight, stuck ones included
 * @param stuck in-flight records whose lease has expired
 * @param completed records with a stored result, expired ones not yet purged included
 * @param released records released by a failed run, waiting for a retry
 * @param oldestInFlight when the oldest in-flight claim was made, if any
 * @param oldestUnexpired when the oldest record still within retention was claimed, if any: how far
 *     back the store remembers keys (seed 000's "oldest unexpired key")
 * @param oldestPurgeable when the oldest record past retention and still stored expired, if any:
 *     how far the purge is behind (seed 000's "purge lag")
 * @param unreadable records in a state this Idem does not know (a newer Idem's, a hand edit),
 *     counted in no state above; 0 for the in-memory store, which cannot hold one
 */
public record RecordStats(long inFlight, long stuck, long completed, long released, Optional<Instant> oldestInFlight,
    Optional<Instant> oldestUnexpired, Optional<Instant> oldestPurgeable, long unreadable) {
  /**
   * Makes the record.
   *
   * @param inFlight records in flight, stuck ones included
   * @param stuck in-flight records whose lease has expired
   * @param completed records with a stored result
   * @param released records released by a failed run
   * @param oldestInFlight when the oldest in-flight claim was made, if any
   * @param oldestUnexpired when the oldest record still within retention was claimed, if any
   * @param oldestPurgeable when the oldest record past retention and still stored expired, if any
   * @param unreadable records in a state this Idem does not know
   * @throws NullPointerException if an {@code Optional} is null
   */
  public RecordStats {
    Objects.requireNonNull(oldestInFlight, "oldestInFlight");
    Objects.requireNonNull(oldestUnexpired, "oldestUnexpired");
    Objects.requireNonNull(oldestPurgeable, "oldestPurgeable");
  }

  /**
   * The counts of a store in which every record could be read ({@link #unreadable} 0).
   *
   * @param inFlight records in flight, stuck ones included
   * @param stuck in-flight records whose lease has expired
   * @param completed records with a stored result
   * @param released records released by a failed run
   * @param oldestInFlight when the oldest in-flight claim was made, if any
   * @param oldestUnexpired when the oldest record still within retention was claimed, if any
   * @param oldestPurgeable when the oldest record past retention and still stored expired, if any
   * @throws NullPointerException if an {@code Optional} is null
   */
  public RecordStats(long inFlight, long stuck, long completed, long released, Optional<Instant> oldestInFlight,
      Optional<Instant> oldestUnexpired, Optional<Instant> oldestPurgeable) {
    this(inFlight, stuck, completed, released, oldestInFlight, oldestUnexpired, oldestPurgeable, 0);
  }

  /**
   * The counts of a store that does not track retention ({@link #oldestUnexpired} and
   * {@link #oldestPurgeable} empty, so their ages read zero).
   *
   * @param inFlight records in flight, stuck ones included
   * @param stuck in-flight records whose lease has expired
   * @param completed records with a stored result
   * @param released records released by a failed run
   * @param oldestInFlight when the oldest in-flight claim was made, if any
   * @throws NullPointerException if oldestInFlight is null
   */
  public RecordStats(long inFlight, long stuck, long completed, long released, Optional<Instant> oldestInFlight) {
    this(inFlight, stuck, completed, released, oldestInFlight, Optional.empty(), Optional.empty(), 0);
  }

  /**
   * The age of the oldest key the store still honours: a retention that works keeps it near the
   * configured retention; far above, the purge is not running; far below, records are lost early.
   *
   * @param now the current time
   * @return the age, zero when the store holds no unexpired record
   */
  public Duration oldestUnexpiredAge(Instant now) {
    return ageAt(oldestUnexpired, now);
  }

  /**
   * How long the oldest record past retention has waited for the purge: about the purge interval
   * when the purge keeps up, growing when it fails or falls behind.
   *
   * @param now the current time
   * @return the lag, zero when no record past retention is stored
   */
  public Duration purgeLag(Instant now) {
    return ageAt(oldestPurgeable, now);
  }

  private static Duration ageAt(Optional<Instant> t, Instant now) {
    return t.map(x -> Duration.between(x, now)).filter(d -> !d.isNegative()).orElse(Duration.ZERO);
  }

  /**
   * The age of the oldest in-flight claim.
   *
   * @param now the current time
   * @return the age, zero when nothing is in flight
   */
  public Duration oldestInFlightAge(Instant now) {
    return ageAt(oldestInFlight, now);
  }
}
