package dev.idem.webhooks.internal;

import dev.idem.core.spi.Scheduler;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The events one processor is running, and the heartbeat that keeps their leases alive while their
 * handlers run: every third of the lease it extends each one's lease to a full lease from now, so a
 * run longer than the lease keeps its event (its outcome counts, and no other processor runs it
 * beside it), while the lease of a processor that died still lapses within one lease. The heartbeat
 * runs on the processor's scheduler, only while something runs. The processor also never claims an
 * event listed here ({@link #running()}): should a renewal fail (the store unreachable, the process
 * paused) and the lease lapse, the run still going on here is not joined by a second one that
 * would take one more worker each lease.
 *
 * <p>{@link #close()} ends the renewals for good: a handler still running after its processor
 * closed (one that ignored the interrupt) must not keep its event leased for as long as the JVM
 * lives, on a scheduler the app owns and the processor never shuts down.
 *
 * <p>An Error in a renewal or a beat (OutOfMemoryError, StackOverflowError, one from the JDBC
 * driver) goes to {@code onError}, the processor's poll loop, which stops claiming and names it to
 * the next call; the beats go on renewing the runs still going, since their handlers do.
 *
 * <p>Thread-safe.
 */
public final class LeaseHeartbeat {
  // The processor's logger: operators set levels and filters on its name.
  private static final Logger LOG = LoggerFactory.getLogger("dev.idem.webhooks.WebhookProcessor");

  private final InboxStore store;
  private final Clock clock;
  private final Duration lease;
  private final Scheduler scheduler;
  private final BiConsumer<Error, String> onError;

  private final Object lock = new Object();
  /** The events running here, with whether their lease is still theirs to renew. */
  private final Map<EventKey, Run> running = new HashMap<>();
  private final BeatChain beat;  // under lock; beating while something runs
  private boolean closed;  // no renewal from then on
  /** The at-once renewals {@link #keep} scheduled, for {@link #awaitKeptRenewals}; under lock. */
  private final List<Future<?>> keptRenewals = new ArrayList<>();

  /**
   * @param store where the leases are
   * @param clock the source of now for the renewed leases
   * @param scheduler times the heartbeats; a refused one leaves the leases to lapse, as before renewals
   * @param lease how long a renewal extends a lease, from now; a heartbeat every third of it
   * @param onError given an Error a renewal or a beat threw (and where), with no lock held: the
   *     processor stops for it
   */
  public LeaseHeartbeat(InboxStore store, Clock clock, Scheduler scheduler, Duration lease,
      BiConsumer<Error, String> onError) {
    this.store = store;
    this.clock = clock;
    this.lease = lease;
    this.scheduler = scheduler;
    this.onError = onError;
    // At least a millisecond: a lease of a few milliseconds must not turn the heartbeat into a spin.
    // A scheduler that refuses a beat (the processor closing) leaves the leases to lapse as they
    // would without renewals, and the runs still going on are never claimed here again.
    Duration every = lease.dividedBy(3);
    this.beat = new BeatChain(scheduler, every.isZero() ? Duration.ofMillis(1) : every, this::beat, onError,
        "the lease heartbeat");
  }

  /**
   * An event just claimed by this processor: renewed from now on, until {@link #end} (or {@link
   * #close}; after it, the event is listed as running but never renewed, and its lease lapses).
   *
   * @throws Error or RuntimeException if the scheduler failed to take the first beat (it cannot
   *     start a thread, say): the event is not listed, nothing renews it, and the caller hands it back
   */
  public void begin(ClaimedEvent e) {
    EventKey key = EventKey.of(e);
    Run run = new Run(e);
    synchronized (lock) {
      running.put(key, run);
      if (!closed) {
        try {
          beat.startLocked();
        } catch (RuntimeException | Error failed) {
          running.remove(key, run);
          throw failed;
        }
      }
    }
  }

  /** The run of {@code e} is over (its outcome recorded or not): no renewal from now on. */
  public void end(ClaimedEvent e) {
    synchronized (lock) {
      Run r = running.get(EventKey.of(e));
      if (r != null && r.event == e) {
        running.remove(EventKey.of(e));
      }
      if (running.isEmpty()) {
        beat.stopLocked();
      }
    }
  }

  /**
   * The run of {@code e} outlived its maximum run time: its lease is no longer renewed, so that it
   * lapses within one lease and another processor may run the event, should the handler ignore the
   * interrupt. The event stays listed as {@linkplain #running() running} here until {@link #end}.
   */
  public void abandon(ClaimedEvent e) {
    synchronized (lock) {
      Run r = running.get(EventKey.of(e));
      if (r != null && r.event == e && !r.kept) {
        r.renewing = false;
      }
    }
  }

  /**
   * The run of {@code e} is no longer bounded by its maximum run time (its handler called the
   * processor's close(), and waits there for the other runs): its lease is renewed again, whether
   * {@link #abandon} came before this call or comes after it, at each beat until {@link #end} or
   * {@link #close}. If it had been abandoned, it is also renewed at once, to a lease from now, by a
   * task of its own on the scheduler: an abandoned lease ends a lease after its last renewal, which
   * for an event claimed between two beats was not at a beat, so waiting for the next one left a
   * gap, up to a third of a lease, in which another processor claimed the event and ran it beside
   * this run. Not on the calling thread: the handler's close() must not wait for the inbox (a locked
   * row, a database that does not answer) before it stops claiming. And not as a beat: the close()
   * that follows ends the beats, maybe before the scheduler ran this one, and the handler, whose run
   * goes on after its close() returns, is owed a lease from its call. A lease another processor took
   * over meanwhile stays lost (the renewal is fenced by the claim's generation), and is not tried
   * again; one the scheduler refuses (an app's scheduler shut down first) is logged. The
   * processor's close() waits for it (bounded) before it shuts down a scheduler it owns, which
   * would drop it unrun: {@link #awaitKeptRenewals}.
   */
  public void keep(ClaimedEvent e) {
    synchronized (lock) {
      Run r = running.get(EventKey.of(e));
      if (r == null || r.event != e) {
        return;
      }
      boolean wasAbandoned = !r.renewing;
      r.kept = true;
      r.renewing = !r.lost;
      if (!wasAbandoned || !r.renewing || closed) {
        return;
      }
    }
    try {
      Future<?> renewal = scheduler.schedule(() -> renew(List.of(e)), Duration.ZERO);
      synchronized (lock) {
        // Those already run are let go: with an app's scheduler nobody awaits them.
        keptRenewals.removeIf(Future::isDone);
        keptRenewals.add(renewal);
      }
    } catch (RuntimeException refused) {
      // Refused: an app's scheduler shut down before the processor (the poll loop says so too).
      LOG.warn("could not renew the lease of webhook {}/{} at its handler's close(): the scheduler refused the"
          + " task; it is renewed at the next beat, if any", e.source(), e.eventId(), refused);
    } catch (Error failed) {
      // No thread could be made, say: the kill switch goes on all the same, since this runs in
      // close() before it stops claiming.
      LOG.error("could not renew the lease of webhook {}/{} at its handler's close(): the scheduler failed;"
          + " it is renewed at the next beat, if any", e.source(), e.eventId(), failed);
    }
  }

  /**
   * Waits, up to {@code bound}, for the at-once renewals {@link #keep} scheduled: the processor's
   * close calls it before it shuts down a scheduler it owns, which would drop one not run yet (a
   * handler's close() with nothing to wait for gets there at once), and the handler, whose run goes
   * on, would lose the lease it is owed. An interrupt does not end this short wait (the handler is
   * owed its lease whatever the closing caller wants): it is kept, and set again on return.
   */
  public void awaitKeptRenewals(Duration bound) {
    List<Future<?>> pending;
    synchronized (lock) {
      pending = List.copyOf(keptRenewals);
      keptRenewals.clear();
    }
    long start = System.nanoTime();
    long nanos = bound.toNanos();
    boolean interrupted = false;
    try {
      for (Future<?> f : pending) {
        while (true) {
          try {
            f.get(Math.max(0, nanos - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
            break;
          } catch (InterruptedException ex) {
            interrupted = true;
          } catch (TimeoutException ex) {
            LOG.warn("a webhook lease renewal owed to a handler that closed its processor had not run {} into"
                + " close(); that lease may end before the handler does", bound);
            return;
          } catch (ExecutionException | CancellationException ex) {
            break;  // renew() reports its own failures, an Error included
          }
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * No renewal from now on (one already writing finishes, and none follows it), of the events
   * running now or begun later: their leases lapse within one lease, and another processor (another instance, or this app's next one) runs them. The
   * processor's close calls it before waiting for its handlers. Idempotent.
   */
  public void close() {
    synchronized (lock) {
      closed = true;
      beat.stopLocked();
    }
  }

  /** @return the events running here now, never to be claimed again while they run */
  public Set<EventKey> running() {
    synchronized (lock) {
      return Set.copyOf(running.keySet());
    }
  }

  private void beat(long ticket) {
    // Once claimed, the chain is this beat's to carry on whatever fails (an OutOfMemoryError while
    // it lists the events, say), so that the runs going on keep their leases.
    boolean claimed = false;
    try {
      List<ClaimedEvent> due = new ArrayList<>();
      synchronized (lock) {
        // Stale: it started before close() or the last run's end() cancelled it. No renewal after
        // close(); and renewing, it would reschedule beside a chain begun since: renewals twice as often.
        if (!beat.claimLocked(ticket)) {
          return;
        }
        claimed = true;
        for (Run r : running.values()) {
          if (r.renewing) {
            due.add(r.event);
          }
        }
      }
      renew(due);
    } finally {
      if (claimed) {
        synchronized (lock) {
          // Unless stale by now: a stop meanwhile, or a begin() that started a chain while this
          // beat wrote (none was pending), which carries on in its place.
          if (!running.isEmpty() && !closed) {
            beat.rescheduleLocked(ticket);
          }
        }
      }
    }
  }

  /**
   * Extends the leases of {@code events} to a full lease from now, outside the lock. A lease found
   * lost stays lost: no renewal of it from then on. A failure is logged: the events stay renewing,
   * tried again at the next beat. An Error goes to {@code onError} and is not thrown on: the beat
   * that called this reschedules all the same, and a kept renewal's Future ends normally.
   */
  private void renew(List<ClaimedEvent> events) {
    try {
      for (ClaimedEvent lost : store.renew(events, clock.millis() + lease.toMillis())) {
        // Finished meanwhile (nothing to say), or claimed by another processor after a lapse: that
        // run's outcome is recorded as stale when it ends, and said so then.
        synchronized (lock) {
          Run r = running.get(EventKey.of(lost));
          if (r != null && r.event == lost) {
            r.renewing = false;
            r.lost = true;
          }
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("could not renew the leases of {} running webhook(s); they are tried again at the next beat (every"
          + " {}) while the processor is open, and a lease that lapses meanwhile lets another processor run its"
          + " event", events.size(), beat.every(), e);
    } catch (Error e) {
      onError.accept(e, "the lease heartbeat, renewing the leases of " + events.size() + " running webhook(s)");
    }
  }

  /** One event running here. */
  private static final class Run {
    final ClaimedEvent event;
    boolean renewing = true;  // under lock
    boolean kept;  // under lock: out of its maximum run time, never abandoned (keep)
    boolean lost;  // under lock: a renewal found the lease another's

    Run(ClaimedEvent event) {
      this.event = event;
    }
  }
}
