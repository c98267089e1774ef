package dev.idem.server.internal;

import java.time.Duration;

/** Reads a caller's stated timeout: whole milliseconds, as Envoy's {@code x-envoy-expected-rq-timeout-ms}. */
public final class TimeoutHeader {
  private TimeoutHeader() {}

  /**
   * Parses the header's value.
   *
   * @param value the header value, or null
   * @return the timeout, or null when absent or not 1 to 9 digits (an unreadable value is ignored
   *     rather than refused: it only caps a wait)
   */
  public static Duration parse(String value) {
    if (value == null) {
      return null;
    }
    String v = value.trim();
    if (v.isEmpty() || v.length() > 9) {
      return null;
    }
    for (int i = 0; i < v.length(); i++) {
      if (v.charAt(i) < '0' || v.charAt(i) > '9') {
        return null;
      }
    }
    return Duration.ofMillis(Long.parseLong(v));
  }
}
