package dev.idem.core.internal;

import java.time.Duration;
import java.util.Objects;

/** The argument checks the public builders share, each naming the setting in its message. Stateless. */
public final class Checks {
  private Checks() {}

  /**
   * The longest any duration setting may be: 100 years. Delays, timers and leases are added to
   * instants and converted to nanoseconds (a long of them spans 292 years), so a "forever" such as
   * {@code Duration.ofSeconds(Long.MAX_VALUE)} is refused here, naming the setting, instead of
   * overflowing later in a call that names nothing.
   */
  public static final Duration MAX_SETTING = Duration.ofDays(36_525);

  /**
   * @return {@code d}
   * @throws NullPointerException if {@code d} is null
   * @throws IllegalArgumentException if {@code d} is zero, negative or above {@link #MAX_SETTING}
   */
  public static Duration positive(Duration d, String what) {
    Objects.requireNonNull(d, what);
    if (d.isZero() || d.isNegative()) {
      throw new IllegalArgumentException(what + " must be positive: " + d);
    }
    if (d.compareTo(MAX_SETTING) > 0) {
      throw new IllegalArgumentException(what + " must be at most 36525 days (100 years): " + d);
    }
    return d;
  }

  /**
   * For a bound on a call (not a setting), which callers naturally give as "forever", such as
   * {@code ChronoUnit.FOREVER.getDuration()}: a bound above {@link #MAX_SETTING} is taken as
   * MAX_SETTING, which no process outlives, so that it can be added to an instant and converted to
   * nanoseconds.
   *
   * @return {@code d}, or {@link #MAX_SETTING} if {@code d} is longer
   * @throws NullPointerException if {@code d} is null
   */
  public static Duration capped(Duration d) {
    return d.compareTo(MAX_SETTING) > 0 ? MAX_SETTING : d;
  }

  /**
   * @return {@code n}
   * @throws IllegalArgumentException if {@code n} is below 1
   */
  public static int atLeastOne(int n, String what) {
    if (n < 1) {
      throw new IllegalArgumentException(what + " must be at least 1: " + n);
    }
    return n;
  }
}
