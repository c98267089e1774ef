package dev.idem.jdbc;

import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One operation as a listing shows it ({@link JdbcJournal#findSummariesByState}): identity, state,
 * times and how many attempts were made, without the request snapshot or the stored response, so
 * that a page of them takes the same memory whatever the bodies are.
 *
 * <p>Immutable and thread-safe: every component is an immutable value. How many attempts were made
 * is {@link #attemptCount()}, a number, where {@link dev.idem.core.OperationRecord#attempts()} is
 * the list of the attempts themselves.
 *
 * @param id the operation
 * @param state where it is
 * @param reference the app's reference, or null if it gave none
 * @param attemptCount how many attempts were recorded
 * @param createdAt when it was begun
 * @param updatedAt when it last changed
 * @param outcomeUndelivered whether its outcome is still owed to the app's handler, as {@link
 *     dev.idem.core.OperationRecord#outcomeUndelivered()} says it
 */
public record OperationSummary(OperationId id, OperationState state, String reference, int attemptCount,
    Instant createdAt, Instant updatedAt, boolean outcomeUndelivered) {
  /**
   * Makes the summary.
   *
   * @param id the operation
   * @param state where it is
   * @param reference the app's reference, or null
   * @param attemptCount how many attempts were recorded, 0 or more
   * @param createdAt when it was begun
   * @param updatedAt when it last changed
   * @param outcomeUndelivered whether its outcome is still owed to the app's handler
   * @throws NullPointerException if any component but {@code reference} is null
   * @throws IllegalArgumentException if {@code attemptCount} is negative
   */
  public OperationSummary {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(updatedAt, "updatedAt");
    if (attemptCount < 0) {
      throw new IllegalArgumentException("attemptCount must not be negative: " + attemptCount);
    }
  }

  /**
   * The app's reference, if it gave one.
   *
   * @return the reference, or empty
   */
  public Optional<String> appReference() {
    return Optional.ofNullable(reference);
  }
}
