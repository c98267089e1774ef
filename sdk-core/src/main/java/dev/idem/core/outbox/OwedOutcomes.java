package dev.idem.core.outbox;

import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationException;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.internal.AttemptLoop;
import dev.idem.core.internal.Step;
import dev.idem.core.spi.Journal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands the registrations' outcome callbacks what the journal still owes them
 * ({@link Journal#findUndelivered}): outcomes of queued operations that ended with no receipt
 * recorded: the process stopped between the terminal write and the callback, or between the
 * callback and the record; the record failed; or an inline call ended the
 * operation, or a handle got its outcome, neither of which takes it from the callbacks (the rule
 * {@link OutboxDispatcher.Builder#register(String, dev.idem.core.spi.Transport,
 * java.util.function.Consumer, java.util.function.Consumer) register} states).
 * {@code resumePending} does this for resume handlers; an app that runs the dispatcher alone (the
 * Spring starter does) has only this.
 *
 * <p>To whom: the callbacks of a name registered with some, read from the journal
 * ({@code fromJournal()} true: they may have seen it before), then recorded as received. A name
 * registered without callbacks has nobody here to tell, and its owed outcome is left owed, as is
 * one of a name not registered here: a resume handler for that name is its recipient, and its only
 * way to hear of it ({@code resumePending} hands it over; {@code Journal.purge} keeps it until
 * then). Recording it here would take it from that handler: a crashed instance that runs
 * {@code resumePending} with a handler for the name when it comes back would never be told. Such
 * an outcome exists for an operation that a crash (or a failed receipt write) caught between its
 * end and the receipt (at most the deliveries in flight at the crash), one that
 * {@code reconcileUncertain} settled (its new outcome is owed again), and one an inline call ended.
 *
 * <p>When: one written under the executor's own owner name no later than this dispatcher's first
 * call, at once (an earlier incarnation's, found after a restart under the same name); any other
 * once its terminal write is older than the executor's lease (the instance that wrote it is
 * presumed gone, as its leases would be: a live one tells its callbacks and records that within
 * moments). Operations this dispatcher is delivering, or whose outcome it is handing over, are
 * left alone, and each outcome is read again just before it is handed, so that one recorded
 * meanwhile is not handed twice.
 *
 * <p>How much per call: one page, continuing where the last one stopped, so that owed outcomes
 * nobody here takes (names without callbacks, names not registered here, outcomes still within the
 * lease) cost a page per call and hold up nothing: the dispatcher calls this after the poll's
 * deliveries started, once per poll interval at most, on the poller thread. The first call starts
 * at the first owed outcome, so an earlier incarnation's is handed within ceil(backlog / pageSize)
 * calls after the first (more if the journal returns short pages), the backlog being the owed outcomes sorting ahead of it (plus one call
 * per failed read), not at the first call: reading every page then held up a restart's first
 * deliveries behind the whole backlog. A journal that cannot be read ends the call. A page that
 * cannot be read is read again by the next call; an owed outcome that cannot be read again before
 * it is handed is passed over, and the next call carries on after it (the next pass tries it
 * again), so that one that never can be read holds up none after it.
 *
 * <p>Once the dispatcher stops, nothing more is handed, and an outcome whose callback ran while it
 * stopped (the shutdown interrupts the poller, and so the callback) is not recorded: it stays owed,
 * for the next dispatcher.
 *
 * <p>Not thread-safe: called by the dispatcher's polls, which run one at a time.
 */
final class OwedOutcomes {
  // Logged under the dispatcher's name, as the other parts do: log configuration keys on it.
  private static final Logger LOG = LoggerFactory.getLogger(OutboxDispatcher.class);

  private final Journal journal;
  private final Clock clock;
  private final Map<String, Registration> registrations;
  private final DeliveryTracker tracker;
  private final String owner;
  private final Duration presumedGoneAfter;
  private final int pageSize;
  private final BooleanSupplier stopped;
  private Instant firstCall;
  private OperationId after;

  /**
   * @param owner the executor's owner name
   * @param presumedGoneAfter the executor's lease: how old another owner's unrecorded outcome must be
   * @param pageSize owed outcomes read per page
   * @param stopped whether the dispatcher has stopped: hand nothing more
   */
  OwedOutcomes(Journal journal, Clock clock, Map<String, Registration> registrations, DeliveryTracker tracker,
      String owner, Duration presumedGoneAfter, int pageSize, BooleanSupplier stopped) {
    this.journal = journal;
    this.clock = clock;
    this.registrations = registrations;
    this.tracker = tracker;
    this.owner = owner;
    this.presumedGoneAfter = presumedGoneAfter;
    this.pageSize = pageSize;
    this.stopped = stopped;
  }

  /** Reads one page of owed outcomes and hands over those that are due. */
  void handOver() {
    Instant now = clock.instant();
    if (firstCall == null) {
      firstCall = now;
    }
    List<OperationRecord> page;
    try {
      page = journal.findUndelivered(after, pageSize);
    } catch (IdempotencyException | RuntimeException e) {
      LOG.debug("could not look for owed outcomes: {}", e.toString());
      return;
    }
    for (OperationRecord owed : page) {
      Next next = handOver(owed, now);
      if (next != Next.END_BEFORE) {
        after = owed.id();
      }
      if (next != Next.CONTINUE) {
        return;
      }
    }
    if (page.isEmpty()) {
      // The end of the owed outcomes (only an empty page is the last: a journal may return short
      // ones): the next call starts a pass again.
      after = null;
    }
  }

  /** What the call does after one owed outcome. */
  private enum Next {
    /** Go on with the next one. */
    CONTINUE,
    /** End the call; the next one starts after this one. */
    END_AFTER,
    /** End the call; the next one starts with this one. */
    END_BEFORE
  }

  /** Hands {@code owed} over if it is due here. */
  private Next handOver(OperationRecord owed, Instant now) {
    if (stopped.getAsBoolean()) {
      return Next.END_BEFORE;
    }
    Registration reg = registrations.get(owed.id().operation());
    if (reg == null || !reg.hasCallbacks() || !due(owed, now) || tracker.busy(owed.id())) {
      return Next.CONTINUE;
    }
    Optional<OperationRecord> current;
    try {
      current = journal.find(owed.id());
    } catch (IdempotencyException | RuntimeException e) {
      // Passed over, not waited on: a row that fails every time (one the journal cannot decode)
      // would otherwise keep every owed outcome after it from the callbacks for good. The next
      // pass over the owed outcomes tries it again.
      LOG.debug("could not read {} to hand its owed outcome to the callbacks; it stays owed and is tried again on"
          + " the next pass over the owed outcomes: {}", owed.id(), e.toString());
      return Next.END_AFTER;
    }
    if (current.isEmpty() || !current.get().outcomeUndelivered() || tracker.busy(owed.id())) {
      return Next.CONTINUE;
    }
    tell(reg, current.get());
    // Cut short by the shutdown (close() interrupts the poller, and so the callback, which the
    // report then counts as told): not recorded, so the next dispatcher hands it again.
    if (stopped.getAsBoolean() || Thread.currentThread().isInterrupted()) {
      return Next.END_BEFORE;
    }
    tracker.outcomeDelivered(owed.id());
    return Next.CONTINUE;
  }

  private boolean due(OperationRecord owed, Instant now) {
    boolean earlierIncarnation = owner.equals(owed.owner()) && !owed.updatedAt().isAfter(firstCall);
    return earlierIncarnation || !owed.updatedAt().plus(presumedGoneAfter).isAfter(now);
  }

  private void tell(Registration reg, OperationRecord record) {
    Step step = AttemptLoop.settled(record);  // nothing is sent: the outcome is the journal's
    if (step instanceof Step.Done done) {
      reg.report(record.id(), done.outcome(), null);
    } else {
      IdempotencyException failure = step.failure();
      // A key refused as reused arrives as FAILED, read from the journal, as resumePending hands it.
      OperationException asFailure = failure instanceof OperationException oe ? oe
          : new OperationFailedException(failure.getMessage(), failure, record.id(), record.attempts(),
              record.response(), true);
      reg.report(record.id(), null, asFailure);
    }
  }
}
