package dev.idem.core.spi.adapter;

import java.time.Duration;

/**
 * When an adapter stops reading a response body for the journal. Once the status line and the
 * headers of an attempt have arrived, the attempt is answered: its outcome comes from them, and
 * the body only adds what the journal keeps (at most {@link dev.idem.core.spi.ResponseSnapshot#MAX_CAPTURED_BODY}
 * bytes). Reading that body must therefore neither hold the call nor turn an answered attempt into
 * an unanswered one. The rule, the same in every adapter:
 * <ul>
 *   <li>The read timeout bounds the whole captured body, not each read: Idem stops reading one read
 *       timeout after the headers arrived (OkHttp's {@code readTimeout}, java.net.http's request
 *       {@code timeout}). Without it, a body that sends one byte just within each read's timeout
 *       holds the call for as long as the server likes (a 100-byte body at a byte per 500 ms held a
 *       call with a 3 s read timeout for 49.6 s).</li>
 *   <li>With a {@link dev.idem.core.RetryPolicy#attemptTimeout() per-attempt timeout}, Idem stops
 *       reading a little before it: the executor's timer fails an attempt that has not handed back
 *       its answer by then, and an answered attempt reported as "no response" would be sent again
 *       (and end UNCERTAIN although its 2xx had arrived). The margin is a quarter of the timeout,
 *       at most 250 ms. (The executor offers a transport no way to say "answered" before its
 *       timer fires, so a margin is what there is; on the synchronous path an interrupt from the
 *       timer after the headers also ends the reading with the answer.)</li>
 * </ul>
 * What arrived by then is the caller's to read, and the rest of the body goes on to the caller as
 * it arrives; the journal keeps the status and the headers, with the body marked
 * {@link dev.idem.core.spi.ResponseSnapshot#BODY_NOT_KEPT_HEADER not kept}.
 *
 * <p>Times are {@link System#nanoTime()} readings. Immutable and thread-safe.
 */
public final class CaptureDeadline {
  /** No deadline: neither a read timeout nor an attempt timeout applies. */
  public static final CaptureDeadline NONE = new CaptureDeadline(0, false);

  /**
   * The most by which reading stops before the attempt timeout, so that the answer gets back to
   * the executor before its timer fires, even on a loaded machine (a tenth of a 700 ms timeout was
   * not always enough at a load average of 13 on 2 cores).
   */
  static final Duration MAX_MARGIN = Duration.ofMillis(250);

  private final long at;
  private final boolean bounded;

  private CaptureDeadline(long at, boolean bounded) {
    this.at = at;
    this.bounded = bounded;
  }

  /**
   * The deadline for one attempt's captured body.
   *
   * @param headersAt when the status line and headers arrived
   * @param readTimeout the client's read timeout, or null or zero for none
   * @param attemptStarted when the attempt was handed to the transport
   * @param attemptTimeout the retry policy's per-attempt timeout, or null for none
   * @return the earlier of the two bounds, or {@link #NONE}
   */
  public static CaptureDeadline of(long headersAt, Duration readTimeout, long attemptStarted, Duration attemptTimeout) {
    boolean bounded = false;
    long at = 0;
    if (readTimeout != null && readTimeout.compareTo(Duration.ZERO) > 0) {
      at = headersAt + saturatedNanos(readTimeout);
      bounded = true;
    }
    if (attemptTimeout != null && attemptTimeout.compareTo(Duration.ZERO) > 0) {
      Duration margin = attemptTimeout.dividedBy(4);
      if (margin.compareTo(MAX_MARGIN) > 0) {
        margin = MAX_MARGIN;
      }
      long byAttempt = attemptStarted + saturatedNanos(attemptTimeout.minus(margin));
      if (!bounded || byAttempt - at < 0) {
        at = byAttempt;
      }
      bounded = true;
    }
    return bounded ? new CaptureDeadline(at, true) : NONE;
  }

  /**
   * Whether there is a deadline at all.
   *
   * @return false for {@link #NONE}
   */
  public boolean bounded() {
    return bounded;
  }

  /**
   * The deadline as a {@link System#nanoTime()} reading; meaningful only if {@link #bounded()}.
   *
   * @return the deadline
   */
  public long nanoTime() {
    return at;
  }

  /**
   * How long is left at {@code now}.
   *
   * @param now a {@link System#nanoTime()} reading
   * @return the time left, zero once passed; {@code Long.MAX_VALUE} nanoseconds if unbounded
   */
  public long remainingNanos(long now) {
    if (!bounded) {
      return Long.MAX_VALUE;
    }
    return Math.max(0, at - now);
  }

  /**
   * Whether the deadline has passed at {@code now}.
   *
   * @param now a {@link System#nanoTime()} reading
   * @return true once passed; never for {@link #NONE}
   */
  public boolean passed(long now) {
    return bounded && at - now <= 0;
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE / 4; // centuries: effectively none, and safe to add to a nanoTime
    }
  }

  @Override
  public String toString() {
    return bounded ? "CaptureDeadline{in " + Duration.ofNanos(at - System.nanoTime()) + "}" : "CaptureDeadline{none}";
  }
}
