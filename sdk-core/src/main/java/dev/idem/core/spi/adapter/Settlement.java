package dev.idem.core.spi.adapter;

import dev.idem.core.AttemptRecord;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;
import java.util.Objects;

/**
 * An operation's ending that an adapter answers with a response, as its HTTP client would have:
 * SUCCEEDED, or FAILED with the server's last response. Every other ending is thrown instead; see
 * {@link AdapterSupport#settle(dev.idem.core.OperationFailedException)}.
 *
 * @param operationId the operation, with the key sent on every attempt
 * @param response the response to hand the caller
 * @param state SUCCEEDED or FAILED
 * @param replayed true if the response carries the executor's replay header set to {@code true}
 * @param fromJournal true if this call sent nothing: the journal (or a concurrent call of the same
 *     operation) already had the ending
 * @param attempts every recorded attempt, oldest first
 */
public record Settlement(OperationId operationId, ResponseSnapshot response, OperationState state, boolean replayed,
    boolean fromJournal, List<AttemptRecord> attempts) {
  /**
   * Validates the components and copies the attempts.
   *
   * @param operationId the operation
   * @param response the response to hand the caller
   * @param state SUCCEEDED or FAILED
   * @param replayed true if the server marked the response as a replay
   * @param fromJournal true if this call sent nothing
   * @param attempts every recorded attempt, oldest first; copied
   * @throws NullPointerException if any reference is null
   * @throws IllegalArgumentException if {@code state} is neither SUCCEEDED nor FAILED
   */
  public Settlement {
    Objects.requireNonNull(operationId, "operationId");
    Objects.requireNonNull(response, "response");
    Objects.requireNonNull(state, "state");
    if (state != OperationState.SUCCEEDED && state != OperationState.FAILED) {
      throw new IllegalArgumentException("a settlement is SUCCEEDED or FAILED, not " + state);
    }
    attempts = List.copyOf(attempts);
  }
}
