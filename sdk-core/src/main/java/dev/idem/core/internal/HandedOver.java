package dev.idem.core.internal;

import dev.idem.core.AttemptRecord;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.spi.DeliveredOutcome;
import java.util.List;

/**
 * Which outcome an execution handed over, for the delivery record of a resume or an outbox
 * delivery, which hold the outcome or failure the executor returned and not the record it wrote.
 * The executor writes an ending under the lease of its last attempt, at that attempt's generation,
 * so the attempts the outcome reports date it without a read of the journal (a resume records one
 * delivery per operation, and a read each would double its statements). Where the ending was
 * written at another generation (without an attempt under its lease, or settled by a
 * reconciliation, and read from the journal), the journal refuses the record: the outcome stays
 * owed and is handed over once more, marked as read from the journal; a newer outcome is never
 * marked delivered, since every re-finish the executor makes is at a newer generation.
 */
public final class HandedOver {
  private HandedOver() {}

  /**
   * @param id the operation
   * @param state the terminal state the outcome or failure reports
   * @param attempts the attempts it reports
   * @return the outcome handed over, or null if there are no attempts to date it (nothing is
   *     recorded then: the outcome stays owed)
   */
  public static DeliveredOutcome byAttempts(OperationId id, OperationState state, List<AttemptRecord> attempts) {
    if (attempts == null || attempts.isEmpty() || !state.isTerminal()) {
      return null;
    }
    return new DeliveredOutcome(id, state, attempts.get(attempts.size() - 1).generation());
  }
}
