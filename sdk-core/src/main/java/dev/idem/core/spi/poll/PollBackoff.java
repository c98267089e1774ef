package dev.idem.core.spi.poll;

import java.time.Duration;
import org.slf4j.Logger;

/**
 * A {@link PollLoop}'s backoff: how long to wait between polls, and whether the loop is offline
 * (making no progress), with the last failure seen since it last made progress.
 *
 * <p>Each poll without progress doubles the interval, capped at the maximum; the first one takes
 * the loop offline and logs a single WARN (later ones only DEBUG), so an outage of an hour costs
 * one line in the log rather than one per poll. The first progress resets the interval to the base
 * and, if the loop was offline, logs a single INFO.
 *
 * <p>Thread-safe. Its monitor guards the interval, the offline flag and the failure, and is a
 * leaf: nothing is called (not even the logger) while holding it, so a caller may hold its own lock
 * around {@link #interval()} or {@link #isOffline()}.
 */
final class PollBackoff {
  private final Logger log;
  private final String name;
  private final Duration base;
  private final Duration max;
  private Duration interval;
  private boolean offline;
  private Throwable failure;

  /**
   * @param log where the WARN and INFO go (the owner's logger: log configuration keys on it)
   * @param name the owner's name, first in every line
   * @param base the interval while polls make progress, positive
   * @param max the longest interval, no shorter than {@code base}
   */
  PollBackoff(Logger log, String name, Duration base, Duration max) {
    this.log = log;
    this.name = name;
    this.base = base;
    this.max = max;
    this.interval = base;
  }

  /** The wait before the next regular poll. */
  synchronized Duration interval() {
    return interval;
  }

  /** True from a poll without progress until the next progress. */
  synchronized boolean isOffline() {
    return offline;
  }

  /** The failure given with the last poll without progress, since the last progress; else null. */
  synchronized Throwable failure() {
    return failure;
  }

  /**
   * Progress: back to the base interval.
   *
   * @return true if this brought the loop back online (and logged the INFO)
   */
  boolean progressed() {
    boolean wasOffline;
    synchronized (this) {
      wasOffline = offline;
      offline = false;
      failure = null;
      interval = base;
    }
    if (wasOffline) {
      log.info("{}: making progress again; polling every {}", name, base);
    }
    return wasOffline;
  }

  /**
   * A poll without progress: double the interval, up to the maximum.
   *
   * @param why what went wrong, for the WARN
   * @param cause the exception behind it, or null; logged with the WARN
   * @return true if this took the loop offline (and logged the WARN)
   */
  boolean noProgress(String why, Throwable cause) {
    boolean wasOffline;
    Duration next;
    synchronized (this) {
      wasOffline = offline;
      offline = true;
      failure = cause;
      long doubled = Math.min(max.toNanos(), Math.max(1, interval.toNanos()) * 2);
      interval = Duration.ofNanos(Math.max(doubled, base.toNanos()));
      next = interval;
    }
    if (!wasOffline) {
      // `why` says what became of the work (the owner knows): no claim about it here. A null
      // cause is one argument too many, which SLF4J ignores.
      log.warn("{}: {}; polling backs off (now every {}, at most {}) until it makes progress", name, why, next, max,
          cause);
    } else {
      log.debug("{} still making no progress; next poll in {}", name, next);
    }
    return !wasOffline;
  }
}
