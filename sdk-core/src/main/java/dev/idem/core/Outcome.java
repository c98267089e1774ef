package dev.idem.core;

import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;
import java.util.Objects;

/**
 * A successful operation: the server said so. Returned only for SUCCEEDED; every other ending is
 * an {@link OperationException}.
 *
 * @param operationId the identity, with the key that was used on every attempt
 * @param response the response that said so (for a replay, the stored original)
 * @param replayed true if the server marked it as a replay ({@code Idempotent-Replayed: true}):
 *     an earlier attempt with this key had already taken effect
 * @param fromJournal true if this process did not send anything now because the journal already
 *     held the success
 * @param attempts the attempt history, oldest first
 */
public record Outcome(OperationId operationId, ResponseSnapshot response, boolean replayed, boolean fromJournal,
    List<AttemptRecord> attempts) {
  /**
   * Validates the components and copies the attempt list.
   *
   * @param operationId the identity, with the key that was used on every attempt
   * @param response the response that said so
   * @param replayed true if the server marked it as a replay
   * @param fromJournal true if nothing was sent now because the journal already held the success
   * @param attempts the attempt history, oldest first; copied into an immutable list
   * @throws NullPointerException if {@code operationId}, {@code response} or {@code attempts} is
   *     null, or {@code attempts} holds null
   */
  public Outcome {
    Objects.requireNonNull(operationId, "operationId");
    Objects.requireNonNull(response, "response");
    attempts = List.copyOf(attempts);
  }

  /**
   * The key, for convenience.
   *
   * @return the idempotency key used on every attempt
   */
  public IdempotencyKey key() {
    return operationId.key();
  }
}
