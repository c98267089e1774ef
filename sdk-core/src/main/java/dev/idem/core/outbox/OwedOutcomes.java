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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands the registrations' outcome callbacks what the journal still owes them
 * ({@link Journal#findUndelivered}): outcomes of queued operations that ended while no callback was
 * told: the process stopped between the terminal write and the callback, or between the callback
 * and the record that it ran; the record failed; or an inline call ended the operation, or a
 * handle got its outcome, neither of which takes it from the callbacks (the rule
 * {@link OutboxDispatcher.Builder#register(String, dev.idem.core.spi.Transport,
 * java.util.function.Consumer, java.util.function.Consumer) register} states).
 * {@code resumePending} does this for resume handlers; an app that runs the dispatcher alone (the
 * Spring starter does) has only this.
 *
 * <p>Which outcomes, of names registered with callbacks: one written under the executor's own owner
 * name no later than this dispatcher's first poll, at once (an earlier incarnation's, found after
 * a restart under the same name); any other once its terminal write is older than the executor's
 * lease (the instance that wrote it is presumed gone, as its leases would be: a live one tells its
 * callbacks and records that within moments). Operations this dispatcher is delivering, or whose
 * outcome it is handing over, are left alone, and each outcome is read again just before it is
 * handed, so that one recorded meanwhile is not handed twice. Each outcome arrives as read from
 * the journal ({@code fromJournal()} true): the callbacks may have seen it before.
 *
 * <p>One page per call, continuing where the last one stopped, so that owed outcomes nobody here
 * takes (names without callbacks, outcomes still within the lease) cost a page per call and hold
 * up nothing. A journal that cannot be read ends the call; the next one carries on.
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
  private Instant firstCall;
  private OperationId after;

  /**
   * @param owner the executor's owner name
   * @param presumedGoneAfter the executor's lease: how old another owner's unrecorded outcome must be
   * @param pageSize owed outcomes read per call
   */
  OwedOutcomes(Journal journal, Clock clock, Map<String, Registration> registrations, DeliveryTracker tracker,
      String owner, Duration presumedGoneAfter, int pageSize) {
    this.journal = journal;
    this.clock = clock;
    this.registrations = registrations;
    this.tracker = tracker;
    this.owner = owner;
    this.presumedGoneAfter = presumedGoneAfter;
    this.pageSize = pageSize;
  }

  /** Reads one page of owed outcomes and hands over those that are due to the callbacks. */
  void handOver() {
    Instant now = clock.instant();
    if (firstCall == null) {
      firstCall = now;
    }
    List<OperationRecord> page;
    try {
      page = journal.findUndelivered(after, pageSize);
    } catch (IdempotencyException | RuntimeException e) {
      LOG.debug("could not look for outcomes owed to the callbacks: {}", e.toString());
      return;
    }
    after = page.size() < pageSize ? null : page.get(page.size() - 1).id();
    for (OperationRecord owed : page) {
      Registration reg = registrations.get(owed.id().operation());
      if (reg == null || !reg.hasCallbacks() || !due(owed, now) || tracker.busy(owed.id())) {
        continue;
      }
      Optional<OperationRecord> current;
      try {
        current = journal.find(owed.id());
      } catch (IdempotencyException | RuntimeException e) {
        LOG.debug("could not read {} to hand its owed outcome over: {}", owed.id(), e.toString());
        return;
      }
      if (current.isEmpty() || !current.get().outcomeUndelivered() || tracker.busy(owed.id())) {
        continue;
      }
      hand(reg, current.get());
    }
  }

  private boolean due(OperationRecord owed, Instant now) {
    boolean earlierIncarnation = owner.equals(owed.owner()) && !owed.updatedAt().isAfter(firstCall);
    return earlierIncarnation || !owed.updatedAt().plus(presumedGoneAfter).isAfter(now);
  }

  private void hand(Registration reg, OperationRecord record) {
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
    tracker.outcomeDelivered(record.id());
  }
}
