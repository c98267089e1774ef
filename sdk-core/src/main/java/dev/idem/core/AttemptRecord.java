package dev.idem.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One attempt of an operation, as recorded in the journal: when it ran, how it ended, and what
 * the executor decided next (the delay it chose and why).
 *
 * @param number 1 for the first attempt of the operation, counting across restarts and re-drives
 * @param generation the fencing generation under which it was sent
 * @param startedAt when the request was handed to the transport
 * @param endedAt when the response or failure came back
 * @param classification how the classifier saw it
 * @param status the HTTP status, or null when no response arrived
 * @param exceptionClass the failure's class name, or null when a response arrived; never the
 *     message, which may carry request data
 * @param reason the classifier's reason
 * @param delay the delay chosen before the next attempt; {@link Duration#ZERO} if none followed
 * @param decision why the executor went on or stopped
 */
public record AttemptRecord(
    int number,
    long generation,
    Instant startedAt,
    Instant endedAt,
    Classification classification,
    Integer status,
    String exceptionClass,
    String reason,
    Duration delay,
    String decision) {

  /**
   * Validates the components.
   *
   * @param number 1 for the first attempt of the operation, counting across restarts and re-drives
   * @param generation the fencing generation under which it was sent
   * @param startedAt when the request was handed to the transport
   * @param endedAt when the response or failure came back
   * @param classification how the classifier saw it
   * @param status the HTTP status, or null when no response arrived
   * @param exceptionClass the failure's class name, or null when a response arrived
   * @param reason the classifier's reason
   * @param delay the delay chosen before the next attempt; {@link Duration#ZERO} if none followed
   * @param decision why the executor went on or stopped
   * @throws IllegalArgumentException if {@code number} is below 1
   * @throws NullPointerException if any component but {@code status} and {@code exceptionClass} is
   *     null
   */
  public AttemptRecord {
    if (number < 1) {
      throw new IllegalArgumentException("attempt numbers start at 1: " + number);
    }
    Objects.requireNonNull(startedAt, "startedAt");
    Objects.requireNonNull(endedAt, "endedAt");
    Objects.requireNonNull(classification, "classification");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(delay, "delay");
    Objects.requireNonNull(decision, "decision");
  }

  /**
   * The HTTP status, if a response arrived.
   *
   * @return the status, or empty when the attempt ended in an exception
   */
  public Optional<Integer> statusCode() {
    return Optional.ofNullable(status);
  }

  /**
   * True when this attempt may have taken effect without a response saying so.
   *
   * @return whether the attempt was classified {@link Classification#AMBIGUOUS}
   */
  public boolean isAmbiguous() {
    return classification == Classification.AMBIGUOUS;
  }

  /**
   * Whether this attempt may have taken effect at the server: it was {@link Classification#AMBIGUOUS},
   * or the server said it succeeded. A SUCCESS attempt in the history of an operation that is not
   * SUCCEEDED is one whose success transition a crash lost (the attempt record was durable, the
   * transition was not): the effect exists, so a later refusal must not end the operation FAILED.
   *
   * @return whether the attempt was AMBIGUOUS or SUCCESS
   */
  public boolean mayHaveTakenEffect() {
    return classification == Classification.AMBIGUOUS || classification == Classification.SUCCESS;
  }

  /**
   * Whether this attempt may have reached the server: every attempt but one certainly not sent
   * ({@link Classification#SAFE}: connection refused, DNS failure, no route...). The server's key
   * retention may have started at such an attempt, so queued delivery's age limit keeps counting
   * from the operation's creation once one is in its history (see {@code Journal.redrive}).
   *
   * @return whether the attempt was classified anything but SAFE
   */
  public boolean mayHaveReachedServer() {
    return classification != Classification.SAFE;
  }
}
