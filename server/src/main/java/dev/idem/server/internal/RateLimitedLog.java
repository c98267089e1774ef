package dev.idem.server.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.event.Level;

/**
 * Logs a failure that may repeat on every request, such as the guard's store being down, without
 * flooding the log: the first failure is logged at ERROR (or the level given) with its stack trace;
 * further ones within the interval after a line are only counted, and the first one after it logs one
 * line at that level, without
 * a stack trace, with the count and the latest failure's message. So an outage costs one line per
 * interval however many requests fail. A success ({@link #succeeded()}) once the interval after the
 * last line has passed logs the failures counted since as one WARN line, and the next failure after
 * that starts again with a stack trace. A failure that comes less often than once per interval is
 * always logged with its stack trace. Counted failures that neither a later failure nor a success
 * reports stay unlogged: there is no timer.
 *
 * <p>Time comes from the given clock; a clock that steps back ends the interval rather than
 * stretching it by the step. Memory is bounded: a count, two instants and the latest failure.
 *
 * <p>Thread-safe. {@link #succeeded()} costs one volatile read while nothing is counted, for the
 * request path. The logger is never called under the lock.
 */
public final class RateLimitedLog {
  /** The default interval between two lines: 60 seconds. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(60);

  private final Logger log;
  private final String what;
  private final Duration interval;
  private final Clock clock;
  private final Level level;
  /** When the last line was logged; null before the first failure and after a success reported. */
  private Instant lastLine;
  /** Failures not logged since the last line; written under the lock, read without it by succeeded(). */
  private volatile long counted;
  /** The latest counted failure (only its {@code toString()} is logged), and when it came. */
  private Throwable latest;
  private Instant latestAt;

  /**
   * @param log where the lines go (the owner's logger: log configuration keys on it)
   * @param what the failure, first in every line, such as {@code "Idempotency store unavailable;
   *     answering 503"}
   * @param interval the least time between two lines; positive
   * @param clock the time source
   * @throws IllegalArgumentException if the interval is not positive
   */
  public RateLimitedLog(Logger log, String what, Duration interval, Clock clock) {
    this(log, what, interval, clock, Level.ERROR);
  }

  /**
   * Like {@link #RateLimitedLog(Logger, String, Duration, Clock)}, for a failure that is not an
   * error, such as a call that is tried again, logged at {@code level} (the line on success stays WARN).
   *
   * @param level the level of the failure lines
   */
  public RateLimitedLog(Logger log, String what, Duration interval, Clock clock, Level level) {
    this.level = Objects.requireNonNull(level, "level");
    this.log = Objects.requireNonNull(log, "log");
    this.what = Objects.requireNonNull(what, "what");
    this.interval = Objects.requireNonNull(interval, "interval");
    this.clock = Objects.requireNonNull(clock, "clock");
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("the interval must be positive: " + interval);
    }
  }

  /**
   * A failure: logged, or counted if a line was logged less than the interval ago.
   *
   * @param failure what went wrong
   */
  public void failed(Throwable failure) {
    Instant now = clock.instant();
    long summarized;
    Duration span;
    synchronized (this) {
      if (lastLine != null && !due(now)) {
        counted++;
        latest = failure;
        latestAt = now;
        return;
      }
      summarized = counted;
      span = lastLine == null ? Duration.ZERO : Duration.between(lastLine, now);
      lastLine = now;
      counted = 0;
      latest = null;
      latestAt = null;
    }
    if (summarized == 0) {
      log.atLevel(level).setCause(failure).log(what);
    } else {
      // The stack trace went out with the first line, and the failure goes on: a count is enough.
      log.atLevel(level).log("{}: {} more times in {} (not logged one by one; latest: {})", what, summarized + 1,
          span, failure.toString());
    }
  }

  /** A success: reports the failures counted since the last line, once the interval after it passed. */
  public void succeeded() {
    if (counted == 0) {
      return;
    }
    Instant now = clock.instant();
    long summarized;
    Duration span;
    Throwable last;
    synchronized (this) {
      if (counted == 0 || !due(now)) {
        return;
      }
      summarized = counted;
      span = Duration.between(lastLine, latestAt);
      last = latest;
      // The failure is over: the next one is news again, with its stack trace.
      lastLine = null;
      counted = 0;
      latest = null;
      latestAt = null;
    }
    log.warn("{}: {} more times in {} (not logged one by one; latest: {}); requests succeed again", what,
        summarized, span, last.toString());
  }

  /** Whether the interval after the last line has passed, or the clock stepped back before it. */
  private boolean due(Instant now) {
    return !now.isBefore(lastLine.plus(interval)) || now.isBefore(lastLine);
  }
}
