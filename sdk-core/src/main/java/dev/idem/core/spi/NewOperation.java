package dev.idem.core.spi;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.OperationId;
import java.time.Instant;
import java.util.Objects;

/**
 * What {@link Journal#begin} records: the identity, the app's optional reference, the request
 * fingerprint, the snapshot (secret headers already removed), and whether it is sent at once or
 * queued.
 *
 * @param id the operation identity
 * @param reference the app's own reference, such as a cart id, or null
 * @param fingerprint the request fingerprint
 * @param request the snapshot to re-send, without secrets
 * @param createdAt when the operation was created
 * @param queued true if the operation is journaled for a deliverer to send later (an outbox
 *     submission, {@code IdempotentExecutor.enqueue}); false if the caller sends it right after
 *     begin and waits for its outcome (an inline call). The journal uses it twice: the first claim
 *     of a queued operation is durable before its attempt leaves, so that one still unclaimed
 *     after a crash is known never to have been sent; and the outcome of a queued operation goes
 *     to a handler, so the journal keeps track of whether one received it
 *     ({@link Journal#recordOutcomeDelivered})
 */
public record NewOperation(OperationId id, String reference, Fingerprint fingerprint, RequestSnapshot request,
    Instant createdAt, boolean queued) {
  /**
   * Validates the components.
   *
   * @param id the operation identity
   * @param reference the app's own reference, such as a cart id, or null
   * @param fingerprint the request fingerprint
   * @param request the snapshot to re-send, without secrets
   * @param createdAt when the operation was created
   * @param queued true if a deliverer sends it later, false if the caller sends it at once
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

  /**
   * An operation the caller sends at once (inline), as {@code IdempotentExecutor.execute} begins it.
   *
   * @param id the operation identity
   * @param reference the app's own reference, such as a cart id, or null
   * @param fingerprint the request fingerprint
   * @param request the snapshot to re-send, without secrets
   * @param createdAt when the operation was created
   * @throws IllegalArgumentException if {@code reference} is empty or longer than 200 characters
   * @throws NullPointerException if any component but {@code reference} is null
   */
  public NewOperation(OperationId id, String reference, Fingerprint fingerprint, RequestSnapshot request,
      Instant createdAt) {
    this(id, reference, fingerprint, request, createdAt, false);
  }
}
