package dev.idem.server;

import dev.idem.core.spi.Scheduler;
import dev.idem.server.internal.StoreCalls;
import dev.idem.server.spi.IdempotencyStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the lease of each of a guard's claims alive while its handler runs, until the claim
 * finishes or the guard closes. A renewal that fails, or finds the lease gone, marks the claim
 * {@linkplain Claim#leaseLost() lost}, and one that succeeds clears the mark; completion is refused
 * if another request took the operation over (a lease that ran out with nobody taking it over is
 * still held, and renewed); fencing in the store keeps a
 * renewal that runs after its claim ended from extending it. In this package, not
 * {@code internal}, since it marks {@link Claim}s through their package-private methods.
 *
 * <p>Thread-safe.
 */
final class LeaseRenewals {
  // The guard's logger, not this class's: operators set levels and filters on the guard's name.
  private static final Logger LOG = LoggerFactory.getLogger(IdempotencyGuard.class);

  private final Scheduler scheduler;
  private final StoreCalls storeCalls;
  private final IdempotencyStore store;
  private final Clock clock;
  private final Duration lease;
  private final Duration renewEvery;
  private final BooleanSupplier closed;

  /**
   * @param scheduler times the renewals; its tasks only hand the store call over
   * @param storeCalls runs the renewals' store calls
   * @param store where the claims' leases are
   * @param clock the source of now for the renewed leases
   * @param lease how long a renewal extends a claim's lease, from now
   * @param renewEvery between the start of one renewal of a claim and its next
   * @param closed true once the guard is closed: no renewal starts after it
   */
  LeaseRenewals(Scheduler scheduler, StoreCalls storeCalls, IdempotencyStore store, Clock clock, Duration lease,
      Duration renewEvery, BooleanSupplier closed) {
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.storeCalls = Objects.requireNonNull(storeCalls, "storeCalls");
    this.store = Objects.requireNonNull(store, "store");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.lease = Objects.requireNonNull(lease, "lease");
    this.renewEvery = Objects.requireNonNull(renewEvery, "renewEvery");
    this.closed = Objects.requireNonNull(closed, "closed");
  }

  /** Renews the lease of a claim just made, every {@code renewEvery}, until it finishes. */
  void start(Claim claim) {
    Renewal renewal = new Renewal(claim);
    claim.renewedBy(renewal::stop);
    renewal.schedule(renewEvery);
  }

  /**
   * The renewals of one claim, one turn at a time: the timer of the next turn, or this renewal
   * queued on the store executor, or its store call running. Stopped when the claim finishes: the
   * timer is cancelled, and a turn still queued on the guard's own pool is taken off its queue, so
   * that behind hung store calls the queue holds no renewal of a claim that ended (with its request
   * body). A turn left queued on an executor of the app's, whose queue the guard cannot reach,
   * no longer holds the claim once stopped.
   */
  private final class Renewal implements Runnable {
    private volatile Claim claim; // null once stopped
    private volatile Future<?> timer;

    Renewal(Claim claim) {
      this.claim = claim;
    }

    /** On the claim's finishing thread; idempotent. */
    void stop() {
      claim = null;
      Future<?> t = timer;
      if (t != null) {
        t.cancel(false);
      }
      storeCalls.remove(this);
    }

    /**
     * Times the claim's next renewal on the scheduler, whose task only hands the store call to the
     * store executor: a store call may wait (a lock, a connection, a round trip), and on the
     * scheduler's one thread a call that hung held back every other claim's renewal until their
     * leases ran out. Called again when a renewal ends, so that a claim's renewals never overlap.
     */
    void schedule(Duration delay) {
      Claim c = claim;
      if (closed.getAsBoolean() || c == null) {
        return;
      }
      try {
        Future<?> t = scheduler.schedule(this::handOver, delay);
        timer = t;
        if (claim == null) {
          t.cancel(false); // stopped while it was being timed, too early to see it
        }
      } catch (RuntimeException | Error e) {
        if (!closed.getAsBoolean()) {
          c.lost(e);
          LOG.error("Could not schedule the next lease renewal of {}; its lease runs out in {}", c, lease, e);
        }
      }
    }

    /** On the scheduler's thread (or the store executor's, when a turn is due at once): hands the renewal over. */
    void handOver() {
      Claim c = claim;
      if (closed.getAsBoolean() || c == null) {
        return;
      }
      try {
        storeCalls.execute(this);
        if (claim == null) {
          storeCalls.remove(this); // stopped while it was being queued, too early to find it there
        }
      } catch (RuntimeException | Error e) {
        if (closed.getAsBoolean()) {
          return;
        }
        // An executor of the app's that refuses work: never dropped unseen, tried again at the next turn.
        c.lost(e);
        LOG.error("The store executor refused the lease renewal of {}; trying again in {}", c, renewEvery, e);
        schedule(renewEvery);
      }
    }

    /** On the store executor: renews the lease, then times the next renewal. */
    @Override
    public void run() {
      Claim c = claim;
      if (closed.getAsBoolean() || c == null) {
        return;
      }
      next(renew(c));
    }

    /**
     * Times the next renewal {@code renewEvery} after the last one started, or hands it over at
     * once if the last call took that long: its lease then runs out {@code lease - renewEvery} or
     * less after now, and waiting another turn would let it lapse.
     *
     * @param lastStarted when the last renewal started; null if it found the lease gone: no more
     */
    private void next(Instant lastStarted) {
      if (lastStarted == null) {
        return;
      }
      Duration left = renewEvery.minus(Duration.between(lastStarted, clock.instant()));
      if (left.isNegative() || left.isZero()) {
        handOver();
      } else {
        schedule(left.compareTo(renewEvery) > 0 ? renewEvery : left); // a clock set back waits no longer
      }
    }
  }

  /**
   * Renews the claim's lease once.
   *
   * @return when the renewal started, from which the next one is timed; null if the lease is gone
   *     or the claim finished during the call, when no renewal follows
   */
  private Instant renew(Claim claim) {
    // The lease is written from this instant (the store's fence compares against it, and nothing
    // later is known before the call), so the next turn is timed from it too: from the call's end, a
    // call that waited in the store (a pooled connection, a row lock) left the lease it wrote
    // running out before the next renewal started, while the handler still ran.
    Instant started = clock.instant();
    try {
      if (!store.renew(claim.id(), claim.generation(), claim.owner(), started, started.plus(lease))) {
        if (claim.finished()) {
          // Completed or abandoned during the call: its end fenced the renewal off, nothing was lost. (A
          // completion still being tried again finds a lost claim itself, and says so.)
          return null;
        }
        claim.lost(null);
        LOG.warn("Lost the lease of {} while its handler ran; its completion will be refused", claim);
        return null;
      }
      claim.renewed();
    } catch (RuntimeException e) {
      // The lease may still be live: keep trying, and let completion decide.
      claim.lost(e);
      LOG.warn("Could not renew the lease of {}", claim, e);
    } catch (Error e) {
      // Not rethrown into the executor, where it would end unseen and renewals would stop quietly:
      // the claim is marked lost (its completion is then refused if another instance took over), and
      // renewals go on.
      claim.lost(e);
      LOG.error("Renewing the lease of {} failed with {}", claim, e.toString(), e);
    }
    return started;
  }
}
