package dev.idem.core;

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
  public Transition {
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(at, "at");
    if (target == OperationState.SUCCEEDED && response == null) {
      throw new IllegalArgumentException("SUCCEEDED needs the response that said so");
    }
  }

  /** Back to PENDING, due at {@code nextAttemptAt}. */
  public static Transition retryAt(Instant at, Instant nextAttemptAt, String reason) {
    return new Transition(OperationState.PENDING, at, nextAttemptAt, null, reason);
  }

  /** To a terminal state. */
  public static Transition finish(OperationState target, Instant at, ResponseSnapshot response, String reason) {
    if (!target.isTerminal()) {
      throw new IllegalArgumentException(target + " is not terminal");
    }
    return new Transition(target, at, null, response, reason);
  }
}
