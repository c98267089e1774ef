package dev.idem.testkit.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * The data of one scripted fault, as the dispatcher reads it.
 *
 * @param kind what to do
 * @param status the HTTP status to answer with, or 0 when the kind sends none of its own
 * @param duration the delay, processing time or Retry-After, or {@link Duration#ZERO} when unused
 */
public record FaultSpec(Kind kind, int status, Duration duration) {
  /** What a fault does, and when in the handling of a request it acts. */
  public enum Kind {
    /** Close the connection before any processing. */
    DROP_REQUEST,
    /** Answer {@code status} before any processing. */
    REJECT,
    /** Answer {@code status} with {@code Retry-After} in delta-seconds, before any processing. */
    RETRY_AFTER_SECONDS,
    /** Answer {@code status} with {@code Retry-After} as an HTTP-date, before any processing. */
    RETRY_AFTER_DATE,
    /** Hold the claim for {@code duration} before running the effect. */
    SLOW_PROCESSING,
    /** Process normally, then close the connection instead of answering. */
    DROP_RESPONSE,
    /** Process normally, then wait {@code duration} before sending the response headers. */
    DELAY_RESPONSE,
    /** Process normally, then answer {@code status} instead of the real result. */
    STATUS_AFTER_PROCESSING;

    /** True when the fault replaces processing altogether, so nothing is claimed or stored. */
    public boolean preventsProcessing() {
      return this == DROP_REQUEST || this == REJECT || this == RETRY_AFTER_SECONDS || this == RETRY_AFTER_DATE;
    }
  }

  /** @throws NullPointerException if {@code kind} or {@code duration} is null */
  public FaultSpec {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(duration, "duration");
  }
}
