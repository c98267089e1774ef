package dev.idem.server.internal;

import java.time.Duration;
import java.util.regex.Pattern;

/** Reads a caller's stated timeout: whole milliseconds, as Envoy's {@code x-envoy-expected-rq-timeout-ms}. */
public final class TimeoutHeader {
  private static final Pattern MILLIS = Pattern.compile("[0-9]{1,9}");

  private TimeoutHeader() {}

  /**
   * Parses the header's value.
   *
   * @param value the header value, or null
   * @return the timeout, or null when absent or not 1 to 9 digits (an unreadable value is ignored
   *     rather than refused: it only caps a wait)
   */
  public static Duration parse(String value) {
    String v = value == null ? "" : value.trim();
    return MILLIS.matcher(v).matches() ? Duration.ofMillis(Long.parseLong(v)) : null;
  }
}
