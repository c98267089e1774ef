package dev.idem.core.outbox;

import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.spi.Journal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.Outcome;
import dev.idem.core.internal.AsyncDriver;
import dev.idem.core.internal.AttemptLoop;
import dev.idem.core.internal.Futures;
import dev.idem.core.internal.NotSentLocally;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dispatcher's bookkeeping: which operations are in delivery (one delivery per operation at
 * most), the handles ("waiters") that callers of {@code submit} and {@code await} hold on
 * operations not yet settled, and, per poll, whether any of the deliveries it started made
 * progress.
 *
 * <p>A handle completes when the dispatcher's own delivery reaches a terminal state
 * ({@link #end}), or, for an operation settled some other way (an inline caller, another process),
 * when {@link #sweep} finds it terminal in the journal. After {@link #close} no delivery starts,
 * and the handles left are handed to the caller to settle.
 *
 * <p>Once an outcome has gone to its recipient, {@link #outcomeDelivered} records that in the
 * journal, so that neither a restart's {@code resumePending} nor the dispatcher's
 * {@link OwedOutcomes} hands the same outcome over again. Who the recipient is (the rule
 * {@link OutboxDispatcher.Builder#register(String, dev.idem.core.spi.Transport,
 * java.util.function.Consumer, java.util.function.Consumer) register} states): the callbacks, if
 * the operation's name registered any; then a handle gets the outcome but does not take it, and
 * only the callbacks' being told is recorded. If the name is registered here without callbacks, a
 * handle is the recipient ({@code handleReceives}), and completing one with the outcome records it,
 * as does the dispatcher's own delivery; an outcome of such a name that the journal still owes
 * (a crash or a failed record caught it between its end and the receipt, at most the deliveries
 * in flight then) is not recorded by {@link OwedOutcomes}: it stays owed for a resume handler of
 * the name, which {@code resumePending} hands it to, and {@code Journal.purge} keeps it until
 * then. A handle on an operation of a name not registered here records nothing either: its
 * recipient is whoever delivers that name (another instance's callbacks, which this one does not
 * know of, or a resume handler).
 *
 * <p>Thread-safe. Its monitor guards every field, including those of {@link Delivery} and
 * {@link Round}. It is a leaf lock: nothing is called while holding it (no journal read, no future
 * completed or cancelled, no callback), so the dispatcher may call in while holding its own lock.
 */
final class DeliveryTracker {
  // Logged under the dispatcher's name, as the other parts do: log configuration keys on it.
  private static final Logger LOG = LoggerFactory.getLogger(OutboxDispatcher.class);

  private final Journal journal;
  private final Clock clock;
  private final int sweepLimit;
  private final Predicate<OperationId> handleReceives;

  private final Map<OperationId, Delivery> inDelivery = new HashMap<>();
  private final Map<OperationId, CompletableFuture<Outcome>> waiters = new LinkedHashMap<>();
  // The waiters in the order the sweep checks them: each sweep takes up to sweepLimit from the
  // head and puts them back at the tail, so every handle is checked in turn, however many there
  // are. An id whose waiter is gone is dropped when the sweep meets it.
  private final ArrayDeque<OperationId> sweepOrder = new ArrayDeque<>();
  // Operations whose delivery ended terminal and whose outcome is on its way to the app (handle,
  // callbacks, then the journal's record that it was received): still owed in the journal, but not
  // for OwedOutcomes to hand over again.
  private final Set<OperationId> handingOver = new HashSet<>();
  private boolean closed;

  /**
   * @param journal where {@link #sweep} looks operations up, and where deliveries are recorded
   * @param clock stamps the recorded deliveries
   * @param sweepLimit how many handles one sweep checks at most
   * @param handleReceives whether a handle that gets an operation's outcome is its recipient: its
   *     name is registered here, without callbacks
   */
  DeliveryTracker(Journal journal, Clock clock, int sweepLimit, Predicate<OperationId> handleReceives) {
    this.journal = journal;
    this.clock = clock;
    this.sweepLimit = sweepLimit;
    this.handleReceives = handleReceives;
  }

  /**
   * Whether a handle that gets the outcome of {@code id} is its recipient, and records it; false if
   * the name's callbacks are (here or on the instance that registers it), a handle then leaving it
   * to them.
   */
  boolean handleReceives(OperationId id) {
    return handleReceives.test(id);
  }

  /**
   * Records in the journal that the app received the outcome of the terminal operation {@code id}.
   * Called with no lock held, after its recipient got it. A failure is logged and swallowed: the
   * outcome stays owed in the journal, and {@link OwedOutcomes} takes it up again once the write
   * is older than the executor's lease: it hands it to the name's callbacks again, marked as read
   * from the journal (which they are told to expect). For a name registered without callbacks
   * nothing here records it: it stays owed until a {@code resumePending} hands it to a resume
   * handler for the name (an app that runs none keeps it in the journal, which purge does not
   * delete).
   */
  void outcomeDelivered(OperationId id) {
    try {
      journal.recordOutcomeDelivered(id, clock.instant());
    } catch (IdempotencyException | RuntimeException e) {
      LOG.debug("could not record that the outcome of {} was delivered; it stays owed, and may be handed over"
          + " again ({})", id, e.toString());
    }
  }

  /**
   * A handle for a terminal record that is about to go to the app ({@code submit} or {@code await}
   * of an operation already finished, a handle the sweep settles, or one settled at stop),
   * recorded as delivered if the journal still owed it to a handle; one owed to callbacks (here or
   * on another instance) stays owed, for {@link OwedOutcomes} to hand them.
   */
  CompletableFuture<Outcome> handOver(OperationRecord record) {
    CompletableFuture<Outcome> settled = AsyncDriver.completed(AttemptLoop.settled(record));
    if (record.outcomeUndelivered() && handleReceives(record.id())) {
      outcomeDelivered(record.id());
    }
    return settled;
  }

  /** How many operations are in delivery. */
  synchronized int inDelivery() {
    return inDelivery.size();
  }

  /** The handle on {@code id} if someone already asked for one, else null. */
  synchronized CompletableFuture<Outcome> existingWaiter(OperationId id) {
    return waiters.get(id);
  }

  /**
   * The handle on {@code id}, created if needed. Callers get {@code copy()}s, so that completing or
   * cancelling theirs affects no one else. This does not check {@link #close}: the dispatcher
   * checks its own state first.
   */
  synchronized CompletableFuture<Outcome> waiter(OperationId id) {
    CompletableFuture<Outcome> w = waiters.get(id);
    if (w == null) {
      w = new CompletableFuture<>();
      waiters.put(id, w);
      sweepOrder.add(id);
    }
    return w;
  }

  /**
   * Room for new deliveries under {@code maxInFlight}, and the operations already in delivery, which
   * a poll must not start again.
   */
  synchronized Capacity capacity(int maxInFlight) {
    return new Capacity(maxInFlight - inDelivery.size(), new HashSet<>(inDelivery.keySet()));
  }

  /**
   * Records that a delivery of {@code id} is starting, as part of {@code round}.
   *
   * @return the delivery, or null if the tracker is closed: start nothing
   */
  synchronized Delivery start(OperationId id, Round round) {
    if (closed) {
      return null;
    }
    Delivery d = new Delivery(id, round);
    inDelivery.put(id, d);
    return d;
  }

  /**
   * Attaches the running delivery's future, so that {@link #close} can cancel it.
   *
   * @return true if the tracker closed meanwhile: the caller must cancel {@code future} itself,
   *     since {@link #close} did not see it
   */
  synchronized boolean attach(Delivery d, CompletableFuture<Outcome> future) {
    d.future = future;
    return closed;
  }

  /**
   * Records that a delivery ended, and takes its handle if the ending is terminal. The caller
   * completes the handle (outside this lock).
   *
   * @param terminal the operation reached a terminal state (or the journal no longer has it)
   * @param progress the target answered for good
   */
  synchronized Ended end(Delivery d, boolean terminal, boolean progress) {
    inDelivery.remove(d.id, d);
    if (terminal) {
      handingOver.add(d.id);  // until handedOver
    }
    CompletableFuture<Outcome> waiter = terminal ? waiters.remove(d.id) : null;
    d.round.outstanding--;
    d.round.progressed |= progress;
    return new Ended(waiter, d.round.outstanding == 0, d.round.progressed, closed);
  }

  /** The outcome of a delivery that {@link #end} took as terminal has gone to the app (or nowhere). */
  synchronized void handedOver(OperationId id) {
    handingOver.remove(id);
  }

  /** Whether {@code id} is in delivery, or its delivery's outcome is being handed over. */
  synchronized boolean busy(OperationId id) {
    return inDelivery.containsKey(id) || handingOver.contains(id);
  }

  /**
   * Completes the handles of operations that reached a terminal state some other way: checks up to
   * the sweep limit of handles on operations not in delivery, in turn, in the journal. Stops at the
   * first journal failure; the next sweep carries on.
   */
  void sweep() {
    List<OperationId> check = new ArrayList<>();
    synchronized (this) {
      int n = sweepOrder.size();
      for (int i = 0; i < n && check.size() < sweepLimit; i++) {
        OperationId id = sweepOrder.poll();
        if (!waiters.containsKey(id)) {
          continue;
        }
        sweepOrder.add(id);
        if (!inDelivery.containsKey(id)) {
          check.add(id);
        }
      }
    }
    for (OperationId id : check) {
      Optional<OperationRecord> r;
      try {
        r = journal.find(id);
      } catch (IdempotencyException | RuntimeException e) {
        return;
      }
      if (r.isPresent() && !r.get().state().isTerminal()) {
        continue;
      }
      CompletableFuture<Outcome> waiter;
      synchronized (this) {
        // A delivery may have started since the look-up; it will complete the handle itself.
        if (inDelivery.containsKey(id)) {
          continue;
        }
        waiter = waiters.remove(id);
      }
      if (waiter == null) {
        continue;
      }
      if (r.isEmpty()) {
        waiter.completeExceptionally(new IllegalStateException("operation " + id + " is no longer in the journal"));
      } else {
        Futures.completeFrom(waiter, handOver(r.get()));
      }
    }
  }

  /**
   * Closes the tracker: no delivery starts after this. The deliveries in progress stay counted
   * until they end (so {@link #inDelivery()} drains to zero as they are cancelled); the handles
   * are removed and returned.
   */
  synchronized Closed close() {
    closed = true;
    List<CompletableFuture<Outcome>> running = new ArrayList<>();
    for (Delivery d : inDelivery.values()) {
      if (d.future != null) {
        running.add(d.future);
      }
    }
    Map<OperationId, CompletableFuture<Outcome>> orphans = new LinkedHashMap<>(waiters);
    waiters.clear();
    sweepOrder.clear();
    return new Closed(running, orphans);
  }

  /**
   * The deliveries started by one poll. The dispatcher backs off when all of them have ended and
   * none made progress; the WARN it then logs says what became of the round's operations, no more:
   * they do not all stay PENDING if one ended UNCERTAIN. {@code outstanding} and {@code progressed}
   * are guarded by the tracker's monitor; the tally is thread-safe on its own, as endings arrive
   * on the threads that complete them.
   */
  static final class Round {
    /** What became of the operations, by kind of ending, in the order the WARN lists them. */
    private static final String[] KINDS = {
        " stay PENDING with their keys, to be sent again when due (not sent: target unreachable, circuit breaker"
            + " open or retry budget empty; or left for another owner)",
        " ended UNCERTAIN (an attempt may have taken effect)",
        " ended FAILED without an answer from the target",
        " had gone from the journal",
        " ended without a verdict (%s) and stay in the journal",
        " stay PENDING with their keys, to be sent again when due (not sent: this dispatcher's own workers were too"
            + " busy to send them in time; the target was not tried)"};
    /** The cause of each kind but the last, OTHER: anything else. */
    private static final List<Class<?>> ENDED_AS = List.of(OperationPendingException.class,
        OperationUncertainException.class, OperationFailedException.class, IllegalArgumentException.class);
    private static final int OTHER = ENDED_AS.size();
    /** PENDING because the dispatcher's own workers did not send them: nothing about the target. */
    private static final int NOT_SENT_LOCALLY = OTHER + 1;
    private final AtomicIntegerArray counts = new AtomicIntegerArray(KINDS.length);
    private final AtomicReference<String> otherCause = new AtomicReference<>();
    private int outstanding;
    private boolean progressed;

    /** @param size how many deliveries the poll is about to start */
    Round(int size) {
      this.outstanding = size;
    }

    /** Counts how one delivery ended, for {@link #describe}. */
    void count(Deliverer.Ending ending) {
      Throwable cause = ending.cause();
      if (ending.outcome() != null || ending.progress()) {
        return;  // such a round is not described: it made progress
      }
      int kind = 0;
      while (kind < OTHER && !ENDED_AS.get(kind).isInstance(cause)) {
        kind++;
      }
      if (kind == OTHER) {
        otherCause.compareAndSet(null, cause == null ? "no cause" : cause.getClass().getSimpleName());
      } else if (kind == 0 && NotSentLocally.in(cause)) {
        kind = NOT_SENT_LOCALLY;
      }
      counts.incrementAndGet(kind);
    }

    /** What the round's deliveries became, for the WARN of a round without progress. */
    String describe() {
      int total = 0;
      List<String> parts = new ArrayList<>();
      for (int kind = 0; kind < KINDS.length; kind++) {
        int n = counts.get(kind);
        total += n;
        if (n > 0) {
          parts.add(n + (kind == OTHER ? String.format(KINDS[kind], otherCause.get()) : KINDS[kind]));
        }
      }
      return "no delivery made progress; of " + total + (total == 1 ? " operation, " : " operations, ")
          + String.join(", ", parts);
    }
  }

  /** One operation in delivery. {@code future} is guarded by the tracker's monitor. */
  static final class Delivery {
    final OperationId id;
    final Round round;
    private CompletableFuture<Outcome> future;

    private Delivery(OperationId id, Round round) {
      this.id = id;
      this.round = round;
    }
  }

  /**
   * @param room how many more deliveries may start; zero or less means none
   * @param busy the operations in delivery, a snapshot
   */
  record Capacity(int room, Set<OperationId> busy) {}

  /**
   * @param waiter the handle to complete, or null (not terminal, nobody waiting, or closed)
   * @param roundOver every delivery of the round has ended
   * @param roundProgressed some delivery of the round made progress
   * @param closed the tracker is closed: the dispatcher stopped
   */
  record Ended(CompletableFuture<Outcome> waiter, boolean roundOver, boolean roundProgressed, boolean closed) {}

  /**
   * @param running the futures of the deliveries in progress, to cancel
   * @param orphans the handles nobody will complete now, by operation
   */
  record Closed(List<CompletableFuture<Outcome>> running, Map<OperationId, CompletableFuture<Outcome>> orphans) {}
}
