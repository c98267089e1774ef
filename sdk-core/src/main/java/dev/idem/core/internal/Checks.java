package dev.idem.core.internal;

import java.time.Duration;
import java.util.Objects;

/** The argument checks the public builders share, each naming the setting in its message. Stateless. */
public final class Checks {
  private Checks() {}

  /**
   * @return {@code d}
   * @throws NullPointerException if {@code d} is null
   * @throws IllegalArgumentException if {@code d} is zero or negative
   */
  public static Duration positive(Duration d, String what) {
    Objects.requireNonNull(d, what);
    if (d.isZero() || d.isNegative()) {
      throw new IllegalArgumentException(what + " must be positive: " + d);
    }
    return d;
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
