package dev.idem.core.spi;

import dev.idem.core.RetryPolicy;
import java.time.Duration;
import java.util.Objects;

/**
 * What a {@link RetryPolicy} decided after a failed attempt: retry after {@code delay}, or stop.
 * The reason is recorded in the attempt history.
 *
 * @param retry whether to try again
 * @param delay how long to wait first; {@link Duration#ZERO} when not retrying
 * @param reason why, such as {@code "backoff FULL jitter"} or {@code "attempts exhausted (5 of 5)"}
 */
public record RetryDecision(boolean retry, Duration delay, String reason) {
  /**
   * Validates the decision.
   *
   * @param retry whether to try again
   * @param delay how long to wait first; {@link Duration#ZERO} when not retrying
   * @param reason why, recorded in the attempt history
   * @throws IllegalArgumentException if {@code delay} is negative
   * @throws NullPointerException if {@code delay} or {@code reason} is null
   */
  public RetryDecision {
    Objects.requireNonNull(delay, "delay");
    Objects.requireNonNull(reason, "reason");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay must not be negative");
    }
  }

  /**
   * Retry after the given delay.
   *
   * @param delay how long to wait before the next attempt, not negative
   * @param reason why, recorded in the attempt history
   * @throws IllegalArgumentException if {@code delay} is negative
   * @return a decision to retry
   */
  public static RetryDecision retryAfter(Duration delay, String reason) {
    return new RetryDecision(true, delay, reason);
  }

  /**
   * Stop retrying.
   *
   * @param reason why, recorded in the attempt history
   * @return a decision to stop, with a zero delay
   */
  public static RetryDecision stop(String reason) {
    return new RetryDecision(false, Duration.ZERO, reason);
  }
}
