package dev.idem.core.outbox;

import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dispatcher's backoff as a whole: how long to wait between polls, and whether it considers
 * the target offline.
 *
 * <p>Each poll that makes no progress doubles the interval, capped at the maximum; the first one
 * takes the dispatcher offline and logs a single WARN (later ones only DEBUG), so an outage of an
 * hour costs one line in the log rather than one per poll. The first delivery that makes progress
 * resets the interval to the base and, if it was offline, logs a single INFO.
 *
 * <p>Thread-safe. Its monitor guards the interval and the offline flag, and is a leaf: nothing is
 * called (not even the logger) while holding it, so a caller may hold its own lock around
 * {@link #interval()} or {@link #isOffline()}.
 */
final class PollBackoff {
  // Logged under the dispatcher's name, as before it was split out: log configuration keys on it.
  private static final Logger LOG = LoggerFactory.getLogger(OutboxDispatcher.class);

  private final Duration base;
  private final Duration max;
  private Duration interval;
  private boolean offline;

  /**
   * @param base the interval while deliveries make progress, positive
   * @param max the longest interval, no shorter than {@code base}
   */
  PollBackoff(Duration base, Duration max) {
    this.base = base;
    this.max = max;
    this.interval = base;
  }

  /** The wait before the next regular poll. */
  synchronized Duration interval() {
    return interval;
  }

  /** True from a poll without progress until the next delivery that makes progress. */
  synchronized boolean isOffline() {
    return offline;
  }

  /**
   * A delivery made progress: back to the base interval.
   *
   * @return true if this brought the dispatcher back online (and logged the INFO)
   */
  boolean progressed() {
    boolean wasOffline;
    synchronized (this) {
      wasOffline = offline;
      offline = false;
      interval = base;
    }
    if (wasOffline) {
      LOG.info("OutboxDispatcher: deliveries are making progress again; polling every {}", base);
    }
    return wasOffline;
  }

  /**
   * A poll made no progress: double the interval, up to the maximum.
   *
   * @param why what went wrong, for the WARN
   * @return true if this took the dispatcher offline (and logged the WARN)
   */
  boolean noProgress(String why) {
    boolean wasOffline;
    Duration next;
    synchronized (this) {
      wasOffline = offline;
      offline = true;
      long doubled = Math.min(max.toNanos(), Math.max(1, interval.toNanos()) * 2);
      interval = Duration.ofNanos(Math.max(doubled, base.toNanos()));
      next = interval;
    }
    if (!wasOffline) {
      // `why` says what became of the operations (Deliverer.RoundTally): no claim about them here.
      LOG.warn("OutboxDispatcher: {}; polling backs off as a whole (now every {}, at most {}) until a delivery"
          + " makes progress", why, next, max);
    } else {
      LOG.debug("OutboxDispatcher still making no progress; next poll in {}", next);
    }
    return !wasOffline;
  }
}
