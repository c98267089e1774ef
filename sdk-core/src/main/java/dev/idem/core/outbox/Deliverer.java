package dev.idem.core.outbox;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.spi.Journal;
import dev.idem.core.OperationException;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.Outcome;
import dev.idem.core.internal.ExecutorAccess;
import dev.idem.core.internal.Futures;
import dev.idem.core.spi.poll.PollLoop;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One poll's deliveries: finds the due operations of registered names in the journal, page by
 * page, up to the room left under {@code maxInFlight}; starts each through
 * {@link IdempotentExecutor#resumeAsync} (by {@link ExecutorAccess}, which leaves the executor's
 * background-failure report to the app); and, as each ends, completes its handle, tells the
 * registration's callbacks, and feeds the loop's backoff ({@link PollLoop#progressed},
 * {@link PollLoop#noProgress}).
 *
 * <p>Holds no lock of its own: its state is final, and what changes lives in the
 * {@link DeliveryTracker} and the {@link PollLoop}. Deliveries end on whatever thread completes
 * them (a transport's, the scheduler's, or the caller's if it completes at once).
 */
final class Deliverer {
  // Logged under the dispatcher's name, as before it was split out: log configuration keys on it.
  private static final Logger LOG = LoggerFactory.getLogger(OutboxDispatcher.class);

  /** What the dispatcher does after a delivery ended while it is not stopped; called with no lock held. */
  @FunctionalInterface
  interface Listener {
    /** @param progress the delivery made progress (see {@link Ending#progress}) */
    void ended(boolean progress);
  }

  private final IdempotentExecutor executor;
  private final Journal journal;
  private final Clock clock;
  private final Map<String, Registration> registrations;
  private final int maxInFlight;
  private final int pageSize;
  private final DeliveryTracker tracker;
  private final PollLoop loop;
  private final Listener listener;
  private final DueDeadlines deadlines;
  // True while the loop is offline because the journal could not be read, and for no other reason:
  // the first read that works again then brings it back online. A round that finds due work
  // decides for itself (its deliveries show whether the target answers), and a round without
  // progress (the target, not the journal) clears it: the loop stays offline for the target.
  private volatile boolean offlineForJournal;

  Deliverer(IdempotentExecutor executor, Clock clock, Map<String, Registration> registrations, int maxInFlight,
      int pageSize, DeliveryTracker tracker, PollLoop loop, DueDeadlines deadlines, Listener listener) {
    this.executor = executor;
    this.journal = executor.journal();
    this.clock = clock;
    this.registrations = registrations;
    this.maxInFlight = maxInFlight;
    this.pageSize = pageSize;
    this.tracker = tracker;
    this.loop = loop;
    this.listener = listener;
    this.deadlines = deadlines;
  }

  /**
   * Starts delivering what is due, as one round. A journal that cannot be read counts as a poll
   * without progress; the first read that works after it took the loop offline counts as progress
   * when nothing is due (with nothing to deliver, a working read is the only sign there is; without
   * it the loop would stay offline, and keep new submissions waiting for its backed-off polls, until
   * the next delivery). A round with no room under {@code maxInFlight} reads nothing, and so counts
   * as neither.
   *
   * @return false if the journal could not be read
   */
  boolean deliverDue() {
    DeliveryTracker.Capacity capacity = tracker.capacity(maxInFlight);
    if (capacity.room() <= 0) {
      // Its empty batch says nothing of the journal: only a poll that reads it may bring the loop
      // back online.
      return true;
    }
    List<OperationRecord> batch;
    try {
      batch = findBatch(capacity);
    } catch (IdempotencyException | RuntimeException e) {
      if (!loop.isOffline()) {
        offlineForJournal = true;
      }
      loop.noProgress("the journal cannot be read (" + e.getClass().getSimpleName() + "); nothing is delivered"
          + " until it can be, and every operation stays as the journal holds it", e);
      return false;
    }
    if (offlineForJournal) {
      offlineForJournal = false;
      if (batch.isEmpty()) {
        loop.progressed();
      }
    }
    if (!batch.isEmpty()) {
      // Counted up front, so that the round is not over while later ones are still starting.
      DeliveryTracker.Round round = new DeliveryTracker.Round(batch.size());
      for (OperationRecord r : batch) {
        deliver(r, round);
      }
    }
    return true;
  }

  /**
   * Due operations of registered names not already in delivery, up to the free capacity, in the
   * journal's due order for this executor's owner: its own leases first (an earlier incarnation's,
   * taken back at once after a restart under the same name), then the oldest due. An own lease
   * that this dispatcher is delivering is skipped here; one that an inline call of the same
   * executor holds right now is joined by the executor's single-flight, never claimed twice.
   *
   * <p>Ahead of those, the operations whose wait kept on the scheduler has passed
   * ({@link DueDeadlines}) though the journal, read on a wall clock that stepped back, does not
   * find them due yet; each only while the journal still holds it as it was when the wait began.
   */
  List<OperationRecord> findBatch() throws IdempotencyException {
    return findBatch(tracker.capacity(maxInFlight));
  }

  private List<OperationRecord> findBatch(DeliveryTracker.Capacity capacity) throws IdempotencyException {
    List<OperationRecord> batch = new ArrayList<>();
    if (capacity.room() <= 0) {
      return batch;
    }
    Set<OperationId> taken = new HashSet<>();
    // Every wait that has passed, not only the first `room`: one skipped below (in delivery, or
    // run here by an app's call that may last) must not hold back the waits behind it.
    for (Map.Entry<OperationId, Instant> e : deadlines.due(DueDeadlines.MAX_KEPT)) {
      if (batch.size() >= capacity.room()) {
        break;
      }
      OperationId id = e.getKey();
      if (capacity.busy().contains(id) || runsHere(id)) {
        continue;  // in delivery, or run here: it is kept again, if need be, when that ends
      }
      Optional<OperationRecord> r = journal.find(id);
      if (r.isEmpty()) {
        deadlines.drop(id);
      } else if (deadlines.stillDue(r.get(), e.getValue())) {
        batch.add(r.get());
        taken.add(id);
      }
    }
    if (batch.size() >= capacity.room() || registrations.isEmpty()) {
      return batch;
    }
    Instant now = clock.instant();
    String owner = executor.owner();
    OperationRecord after = null;
    while (true) {
      // Only the names registered here: the others' due operations (another service's backlog on a
      // shared journal) were read, every poll, and skipped.
      List<OperationRecord> page = journal.findDue(now, owner, registrations.keySet(), after, pageSize);
      if (page.isEmpty()) {
        return batch;  // only an empty page is the last: a journal may return short ones
      }
      for (OperationRecord r : page) {
        if (registrations.containsKey(r.id().operation()) && !capacity.busy().contains(r.id())
            && !taken.contains(r.id()) && !runsHere(r.id())) {
          batch.add(r);
          if (batch.size() == capacity.room()) {
            return batch;
          }
        }
      }
      after = page.get(page.size() - 1);
    }
  }

  /**
   * Whether an execution of {@code id} runs in this executor now, other than a delivery of this
   * dispatcher's (those are busy): an app's inline call, on the wire or between its attempts
   * (PENDING in the journal, due once its backoff ends), whatever its lease. That execution ends it
   * and tells its own caller. Joined as a delivery, its outcome reached the dispatcher's callbacks
   * or not depending on whether a poll fell while it ran, and the joins held delivery slots that
   * queued operations waited for. (Under a live lease of this owner's that no execution here
   * holds, it is an earlier incarnation's, which a delivery takes back.)
   */
  private boolean runsHere(OperationId id) {
    return ExecutorAccess.get().runsHere(executor, id);
  }

  private void deliver(OperationRecord record, DeliveryTracker.Round round) {
    OperationId id = record.id();
    Registration reg = registrations.get(id.operation());
    DeliveryTracker.Delivery d = tracker.start(id, round);
    if (d == null) {
      return;  // stopped
    }
    deadlines.started(id);
    CompletableFuture<Outcome> f;
    try {
      // Not the public resumeAsync: its check would take a background failure of the executor that
      // was promised to the app's next call, and a delivery would only log it.
      f = ExecutorAccess.get().resumeAsync(executor, record, reg.transport());
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    if (tracker.attach(d, f)) {
      f.cancel(false);  // stopped while it started; close() did not see it
    }
    f.whenComplete((outcome, error) -> {
      try {
        onDelivered(d, reg, Ending.of(outcome, error, this::vanished, d.id));
      } catch (Error e) {
        loop.broken(e, "a delivery"); // an outcome callback's Error, say
      }
    });
  }

  private void onDelivered(DeliveryTracker.Delivery d, Registration reg, Ending ending) {
    Throwable cause = ending.cause();
    if (ending.withoutVerdict()) {
      LOG.debug("delivery of {} ended without a verdict: {}", d.id, cause.toString());
    }
    // Before tracker.end: the delivery that ends the round reads the tally after every other
    // ending has been counted (the tracker's lock orders them).
    d.round.count(ending);
    DeliveryTracker.Ended ended = tracker.end(d, ending.terminal(), ending.progress());
    try {
      handOver(d, reg, ending, ended.waiter());
    } finally {
      if (ending.terminal()) {
        tracker.handedOver(d.id);
      }
    }
    if (ended.closed()) {
      return;
    }
    Error error = errorIn(cause);
    if (error != null) {
      // From the transport, the journal or a callback: it must not end unseen in a future on a
      // worker thread, and what it left behind is unknown, so the loop stops.
      loop.broken(error, "a delivery");
      return;
    }
    if (!ending.terminal() && cause instanceof OperationPendingException) {
      keepWait(d.id);
    }
    if (ending.progress()) {
      loop.progressed();
    } else if (ended.roundOver() && !ended.roundProgressed()) {
      offlineForJournal = false;
      loop.noProgress(d.round.describe(), null);
    }
    listener.ended(ending.progress());
  }

  /**
   * A delivery ended PENDING: the wait until the due time it journaled is kept on the scheduler
   * too ({@link DueDeadlines#arm}), so that a wall clock that steps back meanwhile does not
   * lengthen it. A journal that cannot be read leaves the operation to its journaled due time.
   */
  private void keepWait(OperationId id) {
    try {
      journal.find(id).ifPresent(deadlines::arm);
    } catch (IdempotencyException | RuntimeException e) {
      LOG.debug("could not read {} back to keep its wait: {}", id, e.toString());
    }
  }

  /**
   * Gives the app a delivery's ending: completes the handle, if any, and for a terminal ending
   * tells the callbacks and records in the journal that the outcome was received, by the rule
   * {@link DeliveryTracker} states: if the name registered callbacks, only once they were told;
   * otherwise once a handle got it, or this executor ended it (nobody else is owed it then).
   */
  private void handOver(DeliveryTracker.Delivery d, Registration reg, Ending ending, CompletableFuture<Outcome> waiter) {
    Throwable cause = ending.cause();
    if (waiter != null) {
      if (ending.outcome() != null) {
        waiter.complete(ending.outcome());
      } else {
        waiter.completeExceptionally(cause);
      }
    }
    // Not for a vanished operation: the callbacks are about outcomes, and it has none.
    if (ending.terminal() && !(cause instanceof IllegalArgumentException)) {
      // The callbacks hear at once of what this executor ended. An ending another owner wrote (an
      // instance of the fleet that delivered it between this poll's read and this delivery) is
      // that one's to tell its own callbacks and record; recording it here could mark as received
      // an outcome whose callback has not run yet.
      // Left unrecorded, an outcome owed to the callbacks that they were not told of here reaches
      // them through OwedOutcomes once the lease has passed, should that instance never tell them.
      boolean deliveredHere = deliveredHere(d.id, ending);
      if (deliveredHere) {
        reg.report(d.id, ending.outcome(), cause);
      }
      if (deliveredHere || (waiter != null && tracker.handleReceives(d.id))) {
        tracker.outcomeDelivered(d.id);  // its recipient has it: it is not handed over again
      }
    }
  }

  /**
   * Whether this executor brought the operation to its terminal state, rather than finding it
   * there as another owner left it. An ending sent now ({@code fromJournal()} false) says so
   * itself. One read from the journal does not say whose it was: this delivery may have written it
   * (an operation it ended at its age limit, {@code KeyRetention.expireIfDue}, is read back from
   * the journal), as may an inline call of the same executor, which tells no callback; or another
   * instance of the fleet did, which tells its own. A key-reuse refusal does not say either. The
   * owner the journal holds the operation under does (a journal that cannot be read says no; the
   * outcome then stays owed in the journal, which hands it over later, rather than risk telling it
   * twice).
   */
  private boolean deliveredHere(OperationId id, Ending ending) {
    if (ending.outcome() != null && !ending.outcome().fromJournal()) {
      return true;
    }
    if (ending.cause() instanceof OperationException failure && !failure.fromJournal()) {
      return true;
    }
    try {
      return journal.find(id).map(r -> executor.owner().equals(r.owner())).orElse(false);
    } catch (IdempotencyException | RuntimeException e) {
      return false;
    }
  }

  /**
   * Whether the journal no longer holds {@code id}: what {@link IdempotentExecutor#resumeAsync}'s
   * IllegalArgumentException means when the operation was deleted (a purge, say). Any other
   * IllegalArgumentException (from the app's code, or a bug) says nothing about the operation's
   * end; a journal that cannot be read here is taken the same way.
   */
  private boolean vanished(OperationId id) {
    try {
      return journal.find(id).isEmpty();
    } catch (IdempotencyException | RuntimeException e) {
      return false;
    }
  }

  /** The first Error in {@code t}'s cause chain (the executor wraps a transport's), or null. */
  private static Error errorIn(Throwable t) {
    for (int depth = 0; t != null && depth < 16; t = t.getCause(), depth++) {
      if (t instanceof Error e) {
        return e;
      }
    }
    return null;
  }

  /**
   * How one delivery ended, as the dispatcher sees it.
   *
   * @param outcome the outcome if the operation SUCCEEDED, else null
   * @param cause why not, unwrapped from {@link CompletionException} and {@link ExecutionException};
   *     null on success
   * @param terminal the operation will not be delivered again: SUCCEEDED, FAILED, UNCERTAIN, its key
   *     reused with another request, or gone from the journal ({@link IllegalArgumentException});
   *     its handle completes now
   * @param progress the target answered for good: a success, a key-reuse refusal, or a FAILED with a
   *     response from the server. A FAILED without a response, an UNCERTAIN or a PENDING proves
   *     nothing about the target.
   */
  record Ending(Outcome outcome, Throwable cause, boolean terminal, boolean progress) {
    static Ending of(Outcome outcome, Throwable error, Predicate<OperationId> vanished, OperationId id) {
      Throwable cause = Futures.unwrap(error);
      boolean terminal = outcome != null || cause instanceof OperationFailedException
          || cause instanceof OperationUncertainException || cause instanceof IdempotencyKeyReusedException
          || (cause instanceof IllegalArgumentException && vanished.test(id));
      boolean progress = outcome != null || cause instanceof IdempotencyKeyReusedException
          || (cause instanceof OperationFailedException f && f.lastResponse().isPresent());
      return new Ending(outcome, cause, terminal, progress);
    }

    /**
     * An unexpected non-terminal ending (a journal failure, say), worth a DEBUG line. PENDING
     * (waiting for its next attempt) and a cancellation by {@code close} are expected.
     */
    boolean withoutVerdict() {
      return cause != null && !terminal && !(cause instanceof OperationPendingException)
          && !(cause instanceof CancellationException);
    }
  }
}
