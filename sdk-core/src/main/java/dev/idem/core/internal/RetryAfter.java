package dev.idem.core.internal;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * Parses {@code Retry-After} (RFC 9110 section 10.2.3): delta-seconds or an HTTP-date. Garbage is
 * ignored rather than trusted, a date in the past means "now", and no value can produce a
 * negative or unbounded wait (the retry policy caps it further).
 */
public final class RetryAfter {
  /** Longer hints are clamped to this; the policy's own cap and deadline apply afterwards. */
  static final Duration MAX = Duration.ofDays(1);

  private RetryAfter() {}

  /**
   * @param value the header value, or null
   * @param now the current instant, for HTTP-dates
   * @return the hinted wait in [0, 1 day], or empty if absent or unparseable
   */
  public static Optional<Duration> parse(String value, Instant now) {
    if (value == null) {
      return Optional.empty();
    }
    String v = value.trim();
    if (v.isEmpty()) {
      return Optional.empty();
    }
    if (v.chars().allMatch(c -> c >= '0' && c <= '9')) {
      // Leading zeros do not make a number bigger ("0000000005" is five seconds). Too many
      // significant digits to fit a long is still a (silly) valid number: clamp, don't fail.
      String digits = v.replaceFirst("^0+(?=.)", "");
      if (digits.length() > 9) {
        return Optional.of(MAX);
      }
      return Optional.of(clamp(Duration.ofSeconds(Long.parseLong(digits))));
    }
    try {
      Instant at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
      Duration d = Duration.between(now, at);
      return Optional.of(d.isNegative() ? Duration.ZERO : clamp(d));
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  private static Duration clamp(Duration d) {
    return d.compareTo(MAX) > 0 ? MAX : d;
  }
}
