package dev.idem.server;

import dev.idem.core.spi.Scheduler;
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

/**
 * Tries again, in the background, a completion whose store call failed (a connection reset, a pool
 * timeout: a blip). The claim's lease stays renewed by {@link LeaseRenewals} meanwhile, so a retry
 * of its key gets 409, never a takeover that would run the handler a second time. The attempts back
 * off from {@value #FIRST_PAUSE_MILLIS} ms, doubling, up to the renewal period, timed on the guard's
 * scheduler and run on its store executor, like the renewals. They end when the completion lands,
 * when the store says the claim was lost (its lease ran out, or it was taken over), when the guard
 * closes, or once the pauses between failed (or refused) attempts add up to one lease period: a
 * store that stays down also lets the lease run out in it, and a completion the store keeps refusing
 * must not hold the key in flight forever. The bound is counted on the scheduler, not the wall
 * clock, so a clock set back does not prolong it; the time the failed store calls took comes on
 * top. An Error from an attempt gives up at once. Giving up stops the renewals, so the lease then runs out and a retry of the key runs the handler again.
 * In this package, not {@code internal}, since it ends {@link Claim}s through their package-private
 * methods.
 *
 * <p>Thread-safe.
 */
final class CompletionRetries {
  // The guard's logger, not this class's: operators set levels and filters on the guard's name.
  private static final Logger LOG = LoggerFactory.getLogger(IdempotencyGuard.class);
  private static final long FIRST_PAUSE_MILLIS = 100;

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

  /**
   * @param scheduler times the attempts; its tasks only hand the store call over
   * @param storeCalls runs the attempts' store calls
   * @param clock the source of now
   * @param lease how long the pauses between failing attempts add up to before they give up
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
  }

  /**
   * Starts trying the completion of a claim again; its lease renewals must still run.
   *
   * @param claim the claim, finished but with its lease renewed
   * @param attempt the store call
   * @param ended told what the completion came to, or null if it was given up; the claim's
   *     renewals are stopped before it is told
   */
  void start(Claim claim, Attempt attempt, Consumer<CompletionResult> ended) {
    Duration first = Duration.ofMillis(FIRST_PAUSE_MILLIS);
    new Retry(claim, attempt, ended).schedule(
        first.compareTo(lastPause) < 0 ? first : lastPause);
  }

  /** The attempts for one claim, one at a time: timed on the scheduler, run on the store executor. */
  private final class Retry implements Runnable {
    private final Claim claim;
    private final Attempt attempt;
    private final Consumer<CompletionResult> ended;
    // Touched by one attempt at a time, each handed over to the next through the scheduler and executor.
    private Duration pause;
    private Duration paused = Duration.ZERO; // the pauses timed so far, this one's included

    Retry(Claim claim, Attempt attempt, Consumer<CompletionResult> ended) {
      this.claim = claim;
      this.attempt = attempt;
      this.ended = ended;
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
      } catch (RuntimeException | Error e) {
        if (closed.getAsBoolean()) {
          giveUp(null);
        } else if (outOfTime()) {
          // A refused try counts as a failed one: an executor that keeps refusing (shut down before
          // the guard) must not keep the key in flight, its lease renewed, for the guard's life.
          giveUp(e);
        } else {
          // An executor of the app's that refuses work: tried again at the next turn.
          LOG.warn("The store executor refused a completion retry of {}", claim, e);
          next();
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
          LOG.warn("Could not store the completion of {} again; its lease is kept, trying again in {}", claim,
              pause.multipliedBy(2).compareTo(lastPause) > 0 ? lastPause : pause.multipliedBy(2), e);
          next();
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
      if (result == CompletionResult.REFUSED) {
        // Also what a store says when the failed call had committed after all (its reply was lost):
        // the claim is then completed, not lost, and nothing is wrong; the store cannot tell which.
        LOG.error("The completion of {} was refused when tried again: its lease ran out and another request may"
            + " have taken it over (and run its handler a second time), unless the failed try had landed after all",
            claim);
      } else {
        LOG.info("Stored the completion of {} on a later try", claim);
      }
      ended.accept(result);
    }

    /**
     * True once the pauses between the tries add up to one lease period: they give up. Counted on the
     * scheduler, not the wall clock, which an NTP step or a restored VM may set back by an hour, and
     * the key would be held in flight for all of it; the time the failed store calls took comes on top.
     */
    private boolean outOfTime() {
      return paused.compareTo(lease) >= 0;
    }

    private void next() {
      Duration doubled = pause.multipliedBy(2);
      schedule(doubled.compareTo(lastPause) > 0 ? lastPause : doubled);
    }

    private void giveUp(Throwable cause) {
      claim.stopRenewals();
      if (closed.getAsBoolean()) {
        LOG.warn("The guard closed before the completion of {} was stored; its lease runs out, and a retry of its key"
            + " then runs the handler again", claim);
      } else {
        LOG.error("Gave up storing the completion of {}; its lease runs out, and a retry of its key then runs the"
            + " handler again", claim, cause);
      }
      ended.accept(null);
    }
  }
}
