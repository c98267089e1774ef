package dev.idem.webhooks.internal;

import dev.idem.core.spi.Scheduler;
import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiConsumer;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A beat that reschedules itself on a {@link Scheduler} while its owner has something to time: the
 * chain behind {@link RunWatchdog} and {@link LeaseHeartbeat}. Each scheduled beat carries a ticket,
 * and only the beat holding the current one counts. {@link #stopLocked()} cancels the pending beat,
 * but {@code cancel(false)} cannot stop one whose task already started (waiting for the owner's
 * lock): the ticket makes that beat stale, so it neither does its work nor schedules another. Without
 * it, a new {@link #startLocked()} between the cancel and the stale beat taking the lock would leave
 * two chains, each rescheduling itself: beats at twice the rate.
 *
 * <p>An Error a beat throws (OutOfMemoryError, StackOverflowError) goes to the owner's error sink,
 * the processor's poll loop, which stops processing and names it to the next call: left to the
 * scheduler, it would end up unseen in a Future nobody reads.
 *
 * <p>Not thread-safe on its own: every method is called under the owner's lock, the beat's
 * {@link #claimLocked} included (first thing in the beat, in the same locked block as its work).
 */
final class BeatChain {
  // The processor's logger: operators set levels and filters on its name.
  private static final Logger LOG = LoggerFactory.getLogger("dev.idem.webhooks.WebhookProcessor");

  private final Scheduler scheduler;
  private final Duration every;
  private final LongConsumer beat;
  private final BiConsumer<Error, String> onError;
  private final String name;

  private Future<?> next;  // the pending beat; null if none is pending
  private long current;  // the ticket of the current beat; any other is stale
  private long issued;  // the last ticket given out: current is one of them, or one never scheduled
  /**
   * A second ticket that counts too, or 0: after a reschedule failed twice, either attempt may
   * have been queued, and the first to run carries the chain on (it makes the other stale).
   */
  private long alternate;

  /**
   * @param beat the owner's beat, given its ticket: it begins with {@link #claimLocked} and ends
   *     with {@link #rescheduleLocked}, both under the owner's lock
   * @param onError given an Error the beat threw, and {@code name}; called with no lock held
   * @param name the owner, for that report: "the lease heartbeat", ...
   */
  BeatChain(Scheduler scheduler, Duration every, LongConsumer beat, BiConsumer<Error, String> onError, String name) {
    this.scheduler = scheduler;
    this.every = every;
    this.beat = beat;
    this.onError = onError;
    this.name = name;
  }

  /** The period of the beats. */
  Duration every() {
    return every;
  }

  /**
   * Schedules a beat unless one is pending. One running outside the lock (a heartbeat's write)
   * becomes stale, and does not reschedule: this one takes over the chain.
   *
   * @throws Error or RuntimeException as the scheduler threw it (not a refusal): the chain is as it
   *     was, and a beat the scheduler may have queued before it threw is stale
   */
  void startLocked() {
    if (next == null) {
      // The new ticket is current only once the scheduler took its beat: one that fails
      // (ScheduledThreadPoolExecutor queues the task, then cannot start a thread: OutOfMemoryError)
      // leaves the chain as it was, a beat running outside the lock still current and rescheduling,
      // and the beat it may have queued stale. The owner undoes its begin.
      long ticket = ++issued;
      try {
        next = scheduler.schedule(() -> run(ticket), every);
        current = ticket;
        alternate = 0;
      } catch (RejectedExecutionException closing) {
        refusedLocked(ticket);
      }
    }
  }

  /** No beat from now on (until {@link #startLocked()}): a beat already started is stale. */
  void stopLocked() {
    current = ++issued;
    alternate = 0;
    if (next != null) {
      next.cancel(false);
      next = null;
    }
  }

  /**
   * First thing in a beat: whether beat {@code ticket} is still the current one, no longer pending
   * if so. False: it was stopped (and maybe another started) after its task began; it must return
   * without doing its work or rescheduling.
   */
  boolean claimLocked(long ticket) {
    if (ticket != current && ticket != alternate) {
      return false;
    }
    current = ticket;
    alternate = 0;
    next = null;
    return true;
  }

  /**
   * Last thing in a beat that still has something to time: the next beat, unless this one went
   * stale.
   *
   * <p>A scheduler that fails (not a refusal) may have queued the beat first
   * (ScheduledThreadPoolExecutor when it cannot start a thread) or not (the heap ran out before it
   * queued it), and which cannot be told: the beat is asked for once more. If the scheduler takes
   * it, it carries the chain on, the first (if queued) stale. If it fails again, both tickets count
   * until one of them runs, so that a beat the scheduler queued, either, carries the chain on; if
   * it queued neither, the chain has ended, the leases to lapse as when the process is paused (the
   * next {@link #startLocked()} starts a chain again).
   *
   * @throws Error or RuntimeException the scheduler's first failure, for the owner to report
   */
  void rescheduleLocked(long ticket) {
    if (ticket == current) {
      try {
        scheduleNextLocked();
      } catch (RuntimeException | Error failed) {
        long first = current;
        try {
          scheduleNextLocked();
        } catch (RuntimeException | Error again) {
          // Reported as the first: a JVM may throw the same preallocated OutOfMemoryError again.
          alternate = first;
        }
        throw failed;
      }
    }
  }

  private void scheduleNextLocked() {
    long following = ++issued;
    current = following;
    alternate = 0;
    next = null;
    try {
      next = scheduler.schedule(() -> run(following), every);
    } catch (RejectedExecutionException closing) {
      refusedLocked(following);
    }
  }

  /** The scheduler is closing and takes no more: no beat, as if stopped; the owner says what that means. */
  private void refusedLocked(long ticket) {
    current = ticket;
    alternate = 0;
    next = null;
  }

  private void run(long ticket) {
    try {
      beat.accept(ticket);
    } catch (Error e) {
      onError.accept(e, name);
    } catch (RuntimeException e) {
      // Only an app's scheduler failing a reschedule gets here (the beats catch their own): said,
      // not left in a Future nobody reads.
      LOG.warn("{} failed at a beat: {}; its beats may have stopped", name, e.toString(), e);
    }
  }
}
