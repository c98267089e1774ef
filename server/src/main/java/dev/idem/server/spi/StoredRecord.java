package dev.idem.server.spi;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.RecordId;
import dev.idem.server.RecordState;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One operation record as a store holds it.
 *
 * @param id the operation identity
 * @param fingerprint the fingerprint of the request that claimed it last
 * @param state where the operation is
 * @param generation the fencing generation, 1 for the first claim, one more for each takeover
 * @param leaseUntil when the in-flight claim expires; meaningful only while {@link RecordState#IN_FLIGHT}
 * @param expiresAt the end of retention: after it the key is new again
 * @param response the stored response, present only when {@link RecordState#COMPLETED}
 */
public record StoredRecord(RecordId id, Fingerprint fingerprint, RecordState state, long generation,
    Instant leaseUntil, Instant expiresAt, Optional<StoredResponse> response) {
  /**
   * Makes the record.
   *
   * @param id the operation identity
   * @param fingerprint the fingerprint of the request that claimed it last
   * @param state where the operation is
   * @param generation the fencing generation, 1 for the first claim, one more for each takeover
   * @param leaseUntil when the in-flight claim expires; meaningful only while {@link RecordState#IN_FLIGHT}
   * @param expiresAt the end of retention: after it the key is new again
   * @param response the stored response, present only when {@link RecordState#COMPLETED}
   * @throws NullPointerException if any component is null
   */
  public StoredRecord {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(fingerprint, "fingerprint");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(leaseUntil, "leaseUntil");
    Objects.requireNonNull(expiresAt, "expiresAt");
    Objects.requireNonNull(response, "response");
  }
}
