package dev.idem.testkit.internal;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/** Formats HTTP-dates. */
public final class HttpDates {
  // IMF-fixdate (RFC 9110 section 5.6.7). DateTimeFormatter.RFC_1123_DATE_TIME is not used because
  // it writes a one-digit day ("Tue, 3 Jun 2008"), which IMF-fixdate does not allow.
  private static final DateTimeFormatter IMF_FIXDATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);

  private HttpDates() {}

  /**
   * Formats an instant as an IMF-fixdate, such as {@code Sun, 06 Nov 1994 08:49:37 GMT}. Sub-second
   * precision is dropped, as the format has none.
   */
  public static String format(Instant instant) {
    return IMF_FIXDATE.format(instant);
  }
}
