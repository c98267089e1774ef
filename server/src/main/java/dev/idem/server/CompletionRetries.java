package dev.idem.server;

import dev.idem.core.spi.Scheduler;
import dev.idem.server.internal.RateLimitedLog;
import dev.idem.server.internal.StoreCalls;
import dev.idem.server.spi.CompletionResult;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Tries again, in the background, a completion whose store call failed (a connection reset, a pool
 * timeout: a blip): the storing of a handler's answer, or the release of a claim (a status the
 * storage policy does not keep, or {@link IdempotencyGuard#abandon} after the handler threw). The claim's lease stays renewed by {@link LeaseRenewals} meanwhile, so a retry
 * of its key gets 409, never a takeover that would run the handler a second time. The attempts back
 * off from {@value #FIRST_PAUSE_MILLIS} ms, doubling, up to the renewal period, timed on the guard's
 * scheduler and run on its store executor, like the renewals. They end when the completion lands,
 * when the store says the claim was lost (taken over after its lease ran out), when the guard
 * closes, or once one lease period has passed since the first failure: a store that stays down also
 * lets the lease run out in it, and a completion the store keeps refusing (or a store whose calls
 * each fail slowly) must not hold the key in flight forever. That period is measured on the guard's
 * clock, the failed store calls' own time included, and no attempt starts after it (the last pause is
 * shortened to end there); the pauses timed on the scheduler count too, so a clock set back does not
 * prolong it. Only the store call of the last attempt, started within the period, may run past it. An
 * Error from an attempt gives up at once. Giving up stops the renewals, so the lease then runs out
 * and a retry of the key runs the handler again.
 *
 * <p>A store that is down fails every request's completion and each of its retries: the failed
 * retries, the refused hand-overs and the give-ups are each logged once per
 * {@link RateLimitedLog#DEFAULT_INTERVAL}, with the first one's stack trace, not once per claim or
 * retry; which claim and when it is tried again is logged at DEBUG.
 * In this package, not {@code internal}, since it ends {@link Claim}s through their package-private
 * methods.
 *
 * <p>Thread-safe.
 */
final class CompletionRetries {
  // The guard's logger, not this class's: operators set levels and filters on the guard's name.
  private static final Logger LOG = LoggerFactory.getLogger(IdempotencyGuard.class);
  private static final long FIRST_PAUSE_MILLIS = 100;

  /**
   * What the completion's store call does, for the log lines: storing an answer, or releasing the
   * claim. A release that fails or is given up lets a retry run the handler, as the release would
   * have; only a lost store means a handler may have run twice.
   */
  enum Kind {
    /** Stores the handler's answer. */
    STORE,
    /** Releases the claim: the handler threw, or its answer is one the storage policy does not keep. */
    RELEASE;

    /** "store the completion of Claim{..}" or "release Claim{..}", as a verb phrase. */
    String act(Claim claim) {
      return this == STORE ? "store the completion of " + claim : "release " + claim;
    }
  }

  /** One try of the completion's store call. */
  interface Attempt {
    /**
     * @param now the current time
     * @return what the completion came to ({@link CompletionResult#REFUSED} if the claim was lost)
     * @throws RuntimeException if the store failed: tried again
     */
    CompletionResult run(Instant now);
  }

  private final Scheduler scheduler;
  private final StoreCalls storeCalls;
  private final Clock clock;
  private final Duration lease;
  private final Duration lastPause;
  private final BooleanSupplier closed;
  // One per concern, so that one flooding does not hide another; owned by the guard through this.
  private final RateLimitedLog retryFailed;
  private final RateLimitedLog executorRefused;
  private final RateLimitedLog gaveUpStoring;
  private final RateLimitedLog gaveUpReleasing;

  /**
   * @param scheduler times the attempts; its tasks only hand the store call over
   * @param storeCalls runs the attempts' store calls
   * @param clock the source of now
   * @param lease how long after the first failure the attempts give up
   * @param renewEvery the longest pause between two attempts
   * @param closed true once the guard is closed: no attempt starts after it
   */
  CompletionRetries(Scheduler scheduler, StoreCalls storeCalls, Clock clock, Duration lease, Duration renewEvery,
      BooleanSupplier closed) {
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.storeCalls = Objects.requireNonNull(storeCalls, "storeCalls");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.lease = Objects.requireNonNull(lease, "lease");
    this.lastPause = Objects.requireNonNull(renewEvery, "renewEvery");
    this.closed = Objects.requireNonNull(closed, "closed");
    this.retryFailed = new RateLimitedLog(LOG, "Could not store a completion or release a claim when tried again;"
        + " its lease is kept and the call tried again", RateLimitedLog.DEFAULT_INTERVAL, clock, Level.WARN);
    this.executorRefused = new RateLimitedLog(LOG, "The store executor refused a try to store a completion or release"
        + " a claim again; tried again at the next turn", RateLimitedLog.DEFAULT_INTERVAL, clock, Level.WARN);
    this.gaveUpStoring = new RateLimitedLog(LOG, "Gave up storing the completion of a claim; its lease runs out, and"
        + " a retry of its key then runs the handler again", RateLimitedLog.DEFAULT_INTERVAL, clock);
    // What the release was for, only later: a warning, not an error.
    this.gaveUpReleasing = new RateLimitedLog(LOG, "Gave up trying to release a claim; its lease runs out, and a"
        + " retry of its key then runs the handler again", RateLimitedLog.DEFAULT_INTERVAL, clock, Level.WARN);
  }

  /**
   * Starts trying the completion of a claim again; its lease renewals must still run.
   *
   * @param claim the claim, finished but with its lease renewed
   * @param attempt the store call
   * @param kind what the store call does, for the log lines
   * @param ended told what the completion came to, or null if it was given up; the claim's
   *     renewals are stopped before it is told
   */
  void start(Claim claim, Attempt attempt, Kind kind, Consumer<CompletionResult> ended) {
    Objects.requireNonNull(kind, "kind");
    Duration first = Duration.ofMillis(FIRST_PAUSE_MILLIS);
    new Retry(claim, attempt, kind, ended).schedule(
        first.compareTo(lastPause) < 0 ? first : lastPause);
  }

  /** The attempts for one claim, one at a time: timed on the scheduler, run on the store executor. */
  private final class Retry implements Runnable {
    private final Claim claim;
    private final Attempt attempt;
    private final Kind kind;
    private final Consumer<CompletionResult> ended;
    private final Instant firstFailure; // on the guard's clock: the retries end one lease after it
    // Touched by one attempt at a time, each handed over to the next through the scheduler and executor.
    private Duration pause;
    private Duration paused = Duration.ZERO; // the pauses timed so far, this one's included

    Retry(Claim claim, Attempt attempt, Kind kind, Consumer<CompletionResult> ended) {
      this.claim = claim;
      this.attempt = attempt;
      this.kind = kind;
      this.ended = ended;
      this.firstFailure = clock.instant();
    }

    void schedule(Duration delay) {
      pause = delay;
      paused = paused.plus(delay);
      if (closed.getAsBoolean()) {
        giveUp(null);
        return;
      }
      try {
        scheduler.schedule(this::handOver, delay);
      } catch (RuntimeException | Error e) {
        giveUp(e);
      }
    }

    void handOver() {
      if (closed.getAsBoolean()) {
        giveUp(null);
        return;
      }
      try {
        storeCalls.execute(this);
        executorRefused.succeeded();
      } catch (RuntimeException | Error e) {
        if (closed.getAsBoolean()) {
          giveUp(null);
        } else if (outOfTime()) {
          // A refused try counts as a failed one: an executor that keeps refusing (shut down before
          // the guard) must not keep the key in flight, its lease renewed, for the guard's life.
          giveUp(e);
        } else {
          // An executor of the app's that refuses work: tried again at the next turn.
          Duration after = nextPause();
          LOG.debug("The store executor refused a try to {} again; trying again in {}", kind.act(claim), after, e);
          executorRefused.failed(e);
          schedule(after);
        }
      }
    }

    /** On the store executor: one attempt. */
    @Override
    public void run() {
      if (closed.getAsBoolean()) {
        giveUp(null);
        return;
      }
      CompletionResult result;
      try {
        result = attempt.run(clock.instant());
      } catch (RuntimeException e) {
        if (outOfTime()) {
          giveUp(e);
        } else {
          Duration after = nextPause();
          LOG.debug("Could not {} again; its lease is kept, trying again in {}", kind.act(claim), after, e);
          retryFailed.failed(e);
          schedule(after);
        }
        return;
      } catch (Error e) {
        // Given up, not rethrown: on the pool thread it would end the tries unseen, with the lease
        // still renewed and the key answering 409 for the guard's life (LeaseRenewals keeps Errors
        // off its threads too). Given up, the lease runs out and a retry runs the handler again.
        giveUp(e);
        return;
      }
      claim.stopRenewals();
      // The store answered: the outage, if any, is over (each reports what it counted since its line).
      retryFailed.succeeded();
      gaveUpStoring.succeeded();
      gaveUpReleasing.succeeded();
      if (result == CompletionResult.REFUSED && kind == Kind.RELEASE) {
        // A lost claim is what the release was for: a retry may run the handler again.
        LOG.warn("Could not {} when tried again: its lease had run out (a retry may have taken it over and run the"
            + " handler again, as the release would have let it), unless the failed try had landed after all",
            kind.act(claim));
      } else if (result == CompletionResult.REFUSED) {
        // Also what a store says when the failed call had committed after all (its reply was lost):
        // the claim is then completed, not lost, and nothing is wrong; the store cannot tell which.
        LOG.error("The completion of {} was refused when tried again: its lease ran out and another request may"
            + " have taken it over (and run its handler a second time), unless the failed try had landed after all",
            claim);
      } else if (kind == Kind.RELEASE) {
        LOG.info("Released {} on a later try", claim);
      } else {
        LOG.info("Stored the completion of {} on a later try", claim);
      }
      ended.accept(result);
    }

    /**
     * How long the tries have taken since the first failure: on the guard's clock, so that the store
     * calls' own time counts (a store whose calls each time out after 10 s would otherwise hold the key
     * in flight for several leases), but never less than the pauses timed on the scheduler, since an
     * NTP step or a restored VM may set the clock back by an hour, and the key would be held in flight
     * for all of it. A clock stepped forward ends the tries early; it also makes every lease in the
     * store look run out, to every other request, so the early end loses nothing more.
     */
    private Duration spent() {
      Duration measured = Duration.between(firstFailure, clock.instant());
      return measured.compareTo(paused) > 0 ? measured : paused;
    }

    /** True once one lease period has passed since the first failure: the tries give up. */
    private boolean outOfTime() {
      return spent().compareTo(lease) >= 0;
    }

    /**
     * The pause before the next try: double the last, at most the renewal period, and ending no
     * later than one lease after the first failure, so that the last try still starts within it.
     * Only called when not {@link #outOfTime()}, so positive.
     */
    private Duration nextPause() {
      Duration doubled = pause.multipliedBy(2);
      Duration next = doubled.compareTo(lastPause) > 0 ? lastPause : doubled;
      Duration left = lease.minus(spent());
      return next.compareTo(left) > 0 ? left : next;
    }

    private void giveUp(Throwable cause) {
      claim.stopRenewals();
      if (closed.getAsBoolean()) {
        LOG.warn("The guard closed before it could {}; its lease runs out, and a retry of its key then runs the"
            + " handler again", kind.act(claim));
      } else {
        LOG.debug("Gave up trying to {}; its lease runs out, and a retry of its key then runs the handler again",
            kind.act(claim), cause);
        // Not closed, so given up for a failure (only a closed guard gives up without one).
        (kind == Kind.RELEASE ? gaveUpReleasing : gaveUpStoring).failed(cause);
      }
      ended.accept(null);
    }
  }
}
