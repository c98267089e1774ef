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
 */
public record RecordStats(long inFlight, long stuck, long completed, long released, Optional<Instant> oldestInFlight) {
  /**
   * Makes the record.
   *
   * @param inFlight records in flight, stuck ones included
   * @param stuck in-flight records whose lease has expired
   * @param completed records with a stored result
   * @param released records released by a failed run
   * @param oldestInFlight when the oldest in-flight claim was made, if any
   * @throws NullPointerException if oldestInFlight is null
   */
  public RecordStats {
    Objects.requireNonNull(oldestInFlight, "oldestInFlight");
  }

  /**
   * The age of the oldest in-flight claim.
   *
   * @param now the current time
   * @return the age, zero when nothing is in flight
   */
  public Duration oldestInFlightAge(Instant now) {
    return oldestInFlight.map(t -> Duration.between(t, now)).filter(d -> !d.isNegative()).orElse(Duration.ZERO);
  }
}
