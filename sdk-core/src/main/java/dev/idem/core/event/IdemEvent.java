package dev.idem.core.event;

import dev.idem.core.AttemptRecord;
import dev.idem.core.OperationId;
import dev.idem.core.ProtocolStatuses;
import java.time.Duration;

/**
 * Something that happened to an operation, a host's circuit breaker or its retry budget, as told
 * to an {@link IdemListener}. Events carry identities, classes, statuses and reasons, never bodies
 * or header values.
 */
public sealed interface IdemEvent {
  /**
   * A new operation was journaled.
   *
   * @param id the operation
   */
  record OperationStarted(OperationId id) implements IdemEvent {}

  /**
   * An attempt is about to be sent.
   *
   * @param id the operation
   * @param number the attempt's number within the operation, 1 for the first
   * @param host the host the attempt goes to
   */
  record AttemptStarted(OperationId id, int number, String host) implements IdemEvent {}

  /**
   * An attempt ended; the record says how.
   *
   * @param id the operation
   * @param attempt what the attempt got: its outcome, status and timing
   * @param host the host the attempt went to
   */
  record AttemptFinished(OperationId id, AttemptRecord attempt, String host) implements IdemEvent {}

  /**
   * Another attempt will follow after {@code delay}.
   *
   * @param id the operation
   * @param delay the wait before the next attempt
   * @param reason why the last attempt is retried
   */
  record RetryScheduled(OperationId id, Duration delay, String reason) implements IdemEvent {}

  /**
   * The server marked a response as a replay of an earlier attempt's result.
   *
   * @param id the operation
   */
  record ReplaySeen(OperationId id) implements IdemEvent {}

  /**
   * The key was used with another payload: refused locally, or by the server (its "key reused"
   * answer, 422 by default, see {@link ProtocolStatuses}); emitted again by every later execution
   * that finds that refusal in the journal.
   *
   * @param id the operation
   * @param detectedByServer true if the server refused the key, false if it was refused locally
   *     before sending
   */
  record KeyMismatch(OperationId id, boolean detectedByServer) implements IdemEvent {}

  /**
   * The operation succeeded; {@code sinceCreation} is the time from journaling to now.
   *
   * @param id the operation
   * @param attempts the attempts made, counting the first
   * @param sinceCreation the time from journaling to now
   */
  record Succeeded(OperationId id, int attempts, Duration sinceCreation) implements IdemEvent {}

  /**
   * The operation ended UNCERTAIN.
   *
   * @param id the operation
   * @param attempts the attempts made, counting the first
   * @param sinceCreation the time from journaling to now
   * @param reason why no response settled the outcome
   */
  record Uncertain(OperationId id, int attempts, Duration sinceCreation, String reason) implements IdemEvent {}

  /**
   * The operation ended FAILED (a dead letter).
   *
   * @param id the operation
   * @param attempts the attempts made, counting the first
   * @param sinceCreation the time from journaling to now
   * @param reason why the operation failed
   */
  record Failed(OperationId id, int attempts, Duration sinceCreation, String reason) implements IdemEvent {}

  /**
   * A retry was not sent because the host's retry budget was empty; the operation stays PENDING.
   *
   * @param id the operation
   * @param host the host whose retry budget was empty
   */
  record BudgetDenied(OperationId id, String host) implements IdemEvent {}

  /**
   * An attempt was not sent because the host's circuit breaker is open; the operation stays
   * PENDING.
   *
   * @param id the operation
   * @param host the host whose breaker is open
   */
  record BreakerRejected(OperationId id, String host) implements IdemEvent {}

  /**
   * A host's circuit breaker changed state, for example from CLOSED to OPEN; states are named as
   * resilience4j names them ({@code CLOSED}, {@code OPEN}, {@code HALF_OPEN}). A change from
   * {@code OPEN} straight to {@code CLOSED}, with no {@code HALF_OPEN} between, is a reset, not a
   * recovery seen by probes: breakers are kept for a bounded number of hosts and, past that
   * number, the breaker of a host whose open period ended long ago and that was not called since
   * may be forgotten. The host's next call gets a new, closed breaker, as a host never called does.
   * A listener that keeps each host's last state thus needs no other event.
   *
   * @param host the host whose breaker changed state
   * @param from the state before the change
   * @param to the state after the change
   */
  record BreakerStateChanged(String host, String from, String to) implements IdemEvent {}
}
