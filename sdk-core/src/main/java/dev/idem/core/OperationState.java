package dev.idem.core;

import java.util.EnumSet;
import java.util.Set;

/**
 * The life cycle of a logical operation.
 *
 * <pre>
 * PENDING --claim--&gt; IN_FLIGHT --2xx--------------------------&gt; SUCCEEDED
 *    ^                   |------permanent (nothing happened)--&gt; FAILED
 *    |                   |------gave up after an ambiguous try-&gt; UNCERTAIN
 *    +--retry scheduled--+
 * </pre>
 *
 * <p>This enum is the one place where transitions are decided: every journal calls
 * {@link #checkTransition(OperationState, OperationState)}. Terminal states are absorbing; the only
 * way out of {@link #FAILED} or {@link #UNCERTAIN} is an explicit re-drive
 * ({@link #checkRedrive(OperationState)}), which keeps the key, and out of {@link #UNCERTAIN} a
 * settlement by reconciliation ({@link #checkSettle(OperationState, OperationState)}), which sends
 * nothing.
 */
public enum OperationState {
  /** Recorded durably and waiting for its next attempt (perhaps at {@code nextAttemptAt}). */
  PENDING,
  /** Claimed by one owner, under a fencing generation, with an attempt possibly on the wire. */
  IN_FLIGHT,
  /** A response said the operation succeeded. Absorbing. */
  SUCCEEDED,
  /** The server answered with a permanent failure, or nothing was ever delivered. */
  FAILED,
  /** The effect may exist, but no response said so. Needs reconciliation or a re-drive. */
  UNCERTAIN;

  private static final Set<OperationState> FROM_PENDING = EnumSet.of(IN_FLIGHT, UNCERTAIN, FAILED);
  private static final Set<OperationState> FROM_IN_FLIGHT =
      EnumSet.of(PENDING, IN_FLIGHT, SUCCEEDED, FAILED, UNCERTAIN);

  /**
   * Returns true for SUCCEEDED, FAILED and UNCERTAIN, which no attempt leaves.
   *
   * @return whether this state is terminal (only a re-drive leaves FAILED or UNCERTAIN)
   */
  public boolean isTerminal() {
    return this == SUCCEEDED || this == FAILED || this == UNCERTAIN;
  }

  /**
   * Returns whether an ordinary transition from this state to {@code target} is allowed.
   * PENDING may go to IN_FLIGHT (claim), or straight to UNCERTAIN or FAILED (given up while
   * waiting, for example past the server's key retention). IN_FLIGHT may go anywhere, including
   * IN_FLIGHT again (a lease taken over under a new generation). Terminal states go nowhere.
   *
   * @param target the state to move to
   * @return whether the transition is allowed
   */
  public boolean canTransitionTo(OperationState target) {
    return switch (this) {
      case PENDING -> FROM_PENDING.contains(target);
      case IN_FLIGHT -> FROM_IN_FLIGHT.contains(target);
      case SUCCEEDED, FAILED, UNCERTAIN -> false;
    };
  }

  /**
   * Throws unless {@code from -> to} is an allowed transition.
   *
   * @param from the current state
   * @param to the state to move to
   * @throws IllegalStateException naming both states, when the transition is not allowed
   */
  public static void checkTransition(OperationState from, OperationState to) {
    if (!from.canTransitionTo(to)) {
      throw new IllegalStateException("illegal operation state transition " + from + " -> " + to
          + (from.isTerminal() ? " (" + from + " is terminal; use re-drive to leave FAILED or UNCERTAIN)" : ""));
    }
  }

  /**
   * Throws unless a PENDING operation that nobody holds may be moved straight to {@code to}: only
   * to a terminal state. Only a claim may make an operation IN_FLIGHT, because it bumps the
   * generation and sets a lease; otherwise the last owner's stale lease would be current again.
   *
   * @param from the operation's current state
   * @param to the terminal state to move it to
   * @throws IllegalStateException if {@code from} is not PENDING
   * @throws IllegalArgumentException if {@code to} is not terminal
   */
  public static void checkAbandon(OperationState from, OperationState to) {
    if (!to.isTerminal()) {
      throw new IllegalArgumentException("abandon moves a PENDING operation to a terminal state, not " + to);
    }
    if (from != PENDING) {
      throw new IllegalStateException("only a PENDING operation can be abandoned, not one that is " + from);
    }
    checkTransition(from, to);
  }

  /**
   * Throws unless an operation in {@code from} may be re-driven (only FAILED and UNCERTAIN may).
   *
   * @param from the operation's current state
   * @throws IllegalStateException when {@code from} is not FAILED or UNCERTAIN
   */
  public static void checkRedrive(OperationState from) {
    if (from != FAILED && from != UNCERTAIN) {
      throw new IllegalStateException("only FAILED or UNCERTAIN operations can be re-driven, not " + from);
    }
  }

  /**
   * Throws unless an operation in {@code from} may be settled as {@code to} by reconciliation
   * ({@code Journal.settleIfUnchanged}): only an UNCERTAIN operation, and only as SUCCEEDED or
   * FAILED. A settlement sends nothing: it records what the app found out about the attempts
   * already made.
   *
   * @param from the operation's current state
   * @param to the state the reconciliation found
   * @throws IllegalStateException if {@code from} is not UNCERTAIN
   * @throws IllegalArgumentException if {@code to} is not SUCCEEDED or FAILED
   */
  public static void checkSettle(OperationState from, OperationState to) {
    if (to != SUCCEEDED && to != FAILED) {
      throw new IllegalArgumentException("an UNCERTAIN operation is settled as SUCCEEDED or FAILED, not " + to);
    }
    if (from != UNCERTAIN) {
      throw new IllegalStateException("only an UNCERTAIN operation can be settled, not one that is " + from);
    }
  }
}
