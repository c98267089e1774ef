package dev.idem.core.internal;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.List;
import java.util.Locale;
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
    for (DateTimeFormatter format : HTTP_DATES) {
      try {
        Instant at = ZonedDateTime.parse(v, format).toInstant();
        Duration d = Duration.between(now, at);
        return Optional.of(d.isNegative() ? Duration.ZERO : clamp(d));
      } catch (DateTimeParseException e) {
        // try the next of the three forms RFC 9110 section 5.6.7 tells recipients to accept
      }
    }
    return Optional.empty();
  }

  /** IMF-fixdate (and RFC 1123), then the obsolete RFC 850 and asctime forms. */
  private static final List<DateTimeFormatter> HTTP_DATES = List.of(
      DateTimeFormatter.RFC_1123_DATE_TIME,
      new DateTimeFormatterBuilder().appendPattern("EEEE, dd-MMM-")
          .appendValueReduced(ChronoField.YEAR, 2, 2, 1970).appendPattern(" HH:mm:ss 'GMT'")
          .toFormatter(Locale.US).withZone(ZoneOffset.UTC),
      new DateTimeFormatterBuilder().appendPattern("EEE MMM").appendLiteral(' ').padNext(2)
          .appendValue(ChronoField.DAY_OF_MONTH).appendPattern(" HH:mm:ss yyyy")
          .toFormatter(Locale.US).withZone(ZoneOffset.UTC));

  private static Duration clamp(Duration d) {
    return d.compareTo(MAX) > 0 ? MAX : d;
  }
}
