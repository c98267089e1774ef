package dev.idem.core.spi;

import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import java.util.Objects;

/**
 * The outcome a resume handler or an outbox awaiter received: which operation, in which terminal
 * state, at which fencing generation. {@link Journal#recordOutcomeDelivered(DeliveredOutcome,
 * java.time.Instant)} records the delivery only while the operation still holds that outcome, so
 * that one it reached afterwards (settled by a reconciliation, or re-driven, claimed and finished
 * again, each at a newer generation) stays owed to its handler.
 *
 * <p>Immutable, so thread-safe.
 *
 * @param id the operation
 * @param state the terminal state handed over (SUCCEEDED, FAILED or UNCERTAIN)
 * @param generation the generation of the record that held that outcome
 */
public record DeliveredOutcome(OperationId id, OperationState state, long generation) {
  /**
   * Validates the components.
   *
   * @param id the operation
   * @param state the terminal state handed over
   * @param generation the generation of the record that held that outcome
   * @throws NullPointerException if {@code id} or {@code state} is null
   * @throws IllegalArgumentException if {@code state} is not terminal, or {@code generation} is negative
   */
  public DeliveredOutcome {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(state, "state");
    if (!state.isTerminal()) {
      throw new IllegalArgumentException("only a terminal outcome is delivered, not " + state);
    }
    if (generation < 0) {
      throw new IllegalArgumentException("generation must not be negative: " + generation);
    }
  }

  /**
   * The outcome {@code record} holds, as handed over from it.
   *
   * @param record a terminal record, as read from the journal
   * @return its operation, state and generation
   * @throws IllegalArgumentException if {@code record} is not terminal
   */
  public static DeliveredOutcome of(OperationRecord record) {
    return new DeliveredOutcome(record.id(), record.state(), record.generation());
  }
}
