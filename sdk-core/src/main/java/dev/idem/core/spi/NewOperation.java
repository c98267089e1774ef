package dev.idem.core.spi;

import dev.idem.core.Fingerprint;
import dev.idem.core.OperationId;
import java.time.Instant;
import java.util.Objects;

/**
 * What {@link Journal#begin} records: the identity, the app's optional reference, the request
 * fingerprint and the snapshot (secret headers already removed).
 *
 * @param id the operation identity
 * @param reference the app's own reference, such as a cart id, or null
 * @param fingerprint the request fingerprint
 * @param request the snapshot to re-send, without secrets
 * @param createdAt when the operation was created
 */
public record NewOperation(OperationId id, String reference, Fingerprint fingerprint, RequestSnapshot request,
    Instant createdAt) {
  /**
   * Validates the components.
   *
   * @param id the operation identity
   * @param reference the app's own reference, such as a cart id, or null
   * @param fingerprint the request fingerprint
   * @param request the snapshot to re-send, without secrets
   * @param createdAt when the operation was created
   * @throws IllegalArgumentException if {@code reference} is empty or longer than 200 characters
   * @throws NullPointerException if any component but {@code reference} is null
   */
  public NewOperation {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(fingerprint, "fingerprint");
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(createdAt, "createdAt");
    if (reference != null && (reference.isEmpty() || reference.length() > 200)) {
      throw new IllegalArgumentException("reference must have 1 to 200 characters");
    }
  }
}
