package dev.idem.core.spi;

import dev.idem.core.OperationState;
import java.time.Instant;
import java.util.Objects;

/**
 * A fenced state change requested of the {@link Journal}: the target state, when, and what goes
 * with it.
 *
 * @param target the new state; checked with {@link OperationState#checkTransition}
 * @param at when it happened
 * @param nextAttemptAt for PENDING, when the next attempt is due; otherwise null
 * @param response for a terminal state, the response to keep (SUCCEEDED always has one); or null
 * @param reason why, for FAILED, UNCERTAIN and PENDING; or null
 */
public record Transition(OperationState target, Instant at, Instant nextAttemptAt, ResponseSnapshot response,
    String reason) {
  /**
   * Validates the change.
   *
   * @param target the new state
   * @param at when it happened
   * @param nextAttemptAt for PENDING, when the next attempt is due; otherwise null
   * @param response for a terminal state, the response to keep; or null
   * @param reason why; or null
   * @throws IllegalArgumentException if {@code target} is SUCCEEDED without a response
   * @throws NullPointerException if {@code target} or {@code at} is null
   */
  public Transition {
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(at, "at");
    if (target == OperationState.SUCCEEDED && response == null) {
      throw new IllegalArgumentException("SUCCEEDED needs the response that said so");
    }
  }

  /**
   * Back to PENDING, due at {@code nextAttemptAt}.
   *
   * @param at when it happened
   * @param nextAttemptAt when the next attempt is due, or null for now
   * @param reason why the operation waits, or null
   * @return a transition to PENDING
   */
  public static Transition retryAt(Instant at, Instant nextAttemptAt, String reason) {
    return new Transition(OperationState.PENDING, at, nextAttemptAt, null, reason);
  }

  /**
   * To a terminal state.
   *
   * @param target SUCCEEDED, FAILED or UNCERTAIN
   * @param at when it happened
   * @param response the response to keep; required for SUCCEEDED, otherwise may be null
   * @param reason why, or null
   * @throws IllegalArgumentException if {@code target} is not terminal, or is SUCCEEDED without a
   *     response
   * @return a transition to {@code target}
   */
  public static Transition finish(OperationState target, Instant at, ResponseSnapshot response, String reason) {
    if (!target.isTerminal()) {
      throw new IllegalArgumentException(target + " is not terminal");
    }
    return new Transition(target, at, null, response, reason);
  }
}
