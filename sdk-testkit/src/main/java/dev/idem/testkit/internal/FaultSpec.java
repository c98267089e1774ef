package dev.idem.testkit.internal;

import java.time.Duration;
import java.util.Objects;
import okhttp3.Headers;

/**
 * The data of one scripted fault, as the dispatcher reads it.
 *
 * @param kind what to do
 * @param status the HTTP status to answer with, or 0 when the kind sends none of its own
 * @param duration the delay, processing time or Retry-After, or {@link Duration#ZERO} when unused
 * @param headers extra response headers, set after the fault's own (so they replace any of the
 *     same name); empty unless {@link Kind#answersItself()}
 */
public record FaultSpec(Kind kind, int status, Duration duration, Headers headers) {
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

    /** True when the fault writes a response of its own status, which can carry extra headers. */
    public boolean answersItself() {
      return this == REJECT || this == RETRY_AFTER_SECONDS || this == RETRY_AFTER_DATE
          || this == STATUS_AFTER_PROCESSING;
    }
  }

  /**
   * @throws NullPointerException if any component is null
   * @throws IllegalArgumentException if there are headers on a kind that does not answer itself
   */
  public FaultSpec {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(duration, "duration");
    Objects.requireNonNull(headers, "headers");
    if (headers.size() > 0 && !kind.answersItself()) {
      throw new IllegalArgumentException(kind + " sends no response of its own to carry headers");
    }
  }

  /** A spec without extra headers. */
  public FaultSpec(Kind kind, int status, Duration duration) {
    this(kind, status, duration, Headers.EMPTY);
  }

  /**
   * This spec with one more extra header, replacing an earlier one of the same name.
   *
   * @throws IllegalArgumentException if the name or value is not a valid HTTP header field, or
   *     {@link Kind#answersItself() the kind} sends no response of its own
   */
  public FaultSpec withHeader(String name, String value) {
    HeaderFields.requireSendable(name, value);
    return new FaultSpec(kind, status, duration, headers.newBuilder().set(name, value).build());
  }
}
