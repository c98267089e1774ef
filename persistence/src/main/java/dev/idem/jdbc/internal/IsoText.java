package dev.idem.jdbc.internal;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;

/**
 * Parses the instants and durations of stored attempts, which {@link Instant#toString()} and
 * {@link Duration#toString()} wrote: the common shapes by hand, anything else with
 * {@link Instant#parse} and {@link Duration#parse}, so the result is always theirs. Those two were
 * a tenth of a durable call's CPU samples (a {@code DateTimeFormatter} resolve and a regular
 * expression per value), and the final transition decodes every attempt of the operation on the
 * writer connection's turn. Writes instants as {@link Instant#toString()} does, by hand for years
 * 0000 to 9999 and with it otherwise: its formatter was half of an attempt's encoding, which runs
 * on the caller's thread for every attempt. Thread-safe (stateless).
 */
final class IsoText {
  private IsoText() {
  }

  /** The first and last second that {@link Instant#toString()} writes with a four-digit year. */
  private static final long YEAR_0000 = -62_167_219_200L;
  private static final long YEAR_9999_END = 253_402_300_799L;

  /** The same text as {@link Instant#toString()}. */
  static String text(Instant i) {
    long seconds = i.getEpochSecond();
    if (seconds < YEAR_0000 || seconds > YEAR_9999_END) {
      return i.toString();
    }
    LocalDate date = LocalDate.ofEpochDay(Math.floorDiv(seconds, 86_400));
    int secondOfDay = (int) Math.floorMod(seconds, 86_400);
    char[] c = new char[30];
    put(c, 0, date.getYear(), 4);
    c[4] = '-';
    put(c, 5, date.getMonthValue(), 2);
    c[7] = '-';
    put(c, 8, date.getDayOfMonth(), 2);
    c[10] = 'T';
    put(c, 11, secondOfDay / 3_600, 2);
    c[13] = ':';
    put(c, 14, secondOfDay / 60 % 60, 2);
    c[16] = ':';
    put(c, 17, secondOfDay % 60, 2);
    int n = 19;
    int nanos = i.getNano();
    if (nanos > 0) {
      // Fractions in groups of three digits, as many groups as the value needs (ISO_INSTANT's).
      c[n++] = '.';
      if (nanos % 1_000_000 == 0) {
        put(c, n, nanos / 1_000_000, 3);
        n += 3;
      } else if (nanos % 1_000 == 0) {
        put(c, n, nanos / 1_000, 6);
        n += 6;
      } else {
        put(c, n, nanos, 9);
        n += 9;
      }
    }
    c[n++] = 'Z';
    return new String(c, 0, n);
  }

  /** Writes {@code value} as {@code width} decimal digits, zero-padded, at {@code at}. */
  private static void put(char[] c, int at, int value, int width) {
    for (int k = at + width - 1; k >= at; k--) {
      c[k] = (char) ('0' + value % 10);
      value /= 10;
    }
  }

  /**
   * As {@link Instant#parse}.
   *
   * @throws java.time.format.DateTimeParseException as {@link Instant#parse} does
   */
  static Instant instant(String s) {
    // yyyy-MM-ddTHH:mm:ss[.f{1,9}]Z, four-digit year: what Instant.toString writes from 0000 to 9999
    int n = s.length();
    if (n < 20 || n > 30 || s.charAt(4) != '-' || s.charAt(7) != '-' || s.charAt(10) != 'T' || s.charAt(13) != ':'
        || s.charAt(16) != ':' || s.charAt(n - 1) != 'Z' || (n > 20 && (s.charAt(19) != '.' || n == 21))) {
      return Instant.parse(s);
    }
    int year = digits(s, 0, 4);
    int month = digits(s, 5, 7);
    int day = digits(s, 8, 10);
    int hour = digits(s, 11, 13);
    int minute = digits(s, 14, 16);
    int second = digits(s, 17, 19);
    int nanos = 0;
    if (n > 20) {
      int fraction = digits(s, 20, n - 1);
      if (fraction < 0) {
        return Instant.parse(s);
      }
      nanos = fraction;
      for (int i = n - 1 - 20; i < 9; i++) {
        nanos *= 10;
      }
    }
    if (year < 0 || month < 1 || month > 12 || day < 1 || day > 28 || hour < 0 || hour > 23 || minute < 0
        || minute > 59 || second < 0 || second > 59) {
      return Instant.parse(s); // including days 29 to 31, whose validity depends on the month
    }
    long epochDay = LocalDate.of(year, month, day).toEpochDay();
    return Instant.ofEpochSecond(epochDay * 86_400 + hour * 3_600L + minute * 60L + second, nanos);
  }

  /**
   * As {@link Duration#parse}.
   *
   * @throws java.time.format.DateTimeParseException as {@link Duration#parse} does
   */
  static Duration duration(String s) {
    // PT<seconds>S and PT<seconds>.<fraction>S, what Duration.toString writes under a minute
    int n = s.length();
    if (n < 4 || n > 16 || s.charAt(0) != 'P' || s.charAt(1) != 'T' || s.charAt(n - 1) != 'S') {
      return Duration.parse(s);
    }
    int dot = s.indexOf('.');
    int secondsEnd = dot < 0 ? n - 1 : dot;
    int seconds = digits(s, 2, secondsEnd);
    if (seconds < 0 || seconds >= 60 || secondsEnd == 2) {
      return Duration.parse(s);
    }
    int nanos = 0;
    if (dot >= 0) {
      int fractionDigits = n - 1 - (dot + 1);
      int fraction = digits(s, dot + 1, n - 1);
      if (fractionDigits < 1 || fractionDigits > 9 || fraction < 0) {
        return Duration.parse(s);
      }
      nanos = fraction;
      for (int i = fractionDigits; i < 9; i++) {
        nanos *= 10;
      }
    }
    return Duration.ofSeconds(seconds, nanos);
  }

  /** The decimal value of {@code s[from, to)}, or -1 if it is empty or holds anything but ASCII digits. */
  private static int digits(String s, int from, int to) {
    if (to <= from || to - from > 9) {
      return -1;
    }
    int v = 0;
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }
}
