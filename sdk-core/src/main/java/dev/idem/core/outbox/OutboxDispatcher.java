package dev.idem.core.outbox;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.spi.Journal;
import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.Outcome;
import dev.idem.core.internal.Checks;
import dev.idem.core.spi.Scheduler;
import dev.idem.core.spi.Transport;
import dev.idem.core.spi.poll.PollLoop;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Queued delivery: {@link #submit} journals an operation and returns at once; a background
 * dispatcher delivers it when it is due, through the transport registered for its operation name.
 *
 * <pre>{@code
 * OutboxDispatcher outbox = OutboxDispatcher.builder(idem)
 *     .register("create-order", transport)          // re-applies Authorization on every attempt
 *     .build()
 *     .start();
 * CompletableFuture<Outcome> handle = outbox.submit(Operation.builder("create-order", snapshot).build());
 * }</pre>
 *
 * <p>How it works:
 * <ul>
 *   <li>The dispatcher polls
 *       {@link Journal#findDue(Instant, String, java.util.Set, OperationRecord, int) Journal.findDue}
 *       for its executor's {@link IdempotentExecutor#owner() owner} and its registered names, page by
 *       page (a journal that can filter the names in its query, as {@code JdbcJournal} does, reads
 *       no other name's operations), so it finds every pending
 *       operation of a registered name, including those journaled before a restart, those an
 *       inline caller left PENDING (budget empty, breaker open) and those whose lease expired. It
 *       takes them in the order that query gives, the one {@code resumePending} follows too: first
 *       those still leased under its own owner name, which an instance restarted under the same
 *       name takes back at its first poll instead of waiting for the lease to expire (the claim
 *       counts the attempt the dead incarnation may have sent as ambiguous, and it is sent again
 *       with the same key); then the rest, oldest due first, so that none waits behind newer
 *       ones.</li>
 *   <li>At most {@link Builder#maxInFlight} operations are in delivery at once. Each is driven by
 *       {@link IdempotentExecutor#resumeAsync} with the executor's default retry policy (an
 *       {@link Operation}'s own policy is not journaled), so no thread is held during backoff. A
 *       synchronous {@link Transport} runs on a bounded worker pool. These deliveries are the
 *       dispatcher's own calls, not the app's: once the executor is closed they are refused, but
 *       a failure of the executor's background work, which the executor reports to "the next
 *       call" (see {@link IdempotentExecutor}), is left for the app's next own call (a
 *       {@link #submit} included); the dispatcher neither takes that report nor stops for it.</li>
 *   <li>Offline is a state, not a failure. An operation whose attempts were certainly not sent
 *       (connection refused, DNS failure, no route, circuit breaker open, retry budget empty) is
 *       never ended by them: after its round of attempts it goes back to PENDING with its key, due
 *       again after the retry policy's {@code maxDelay}, and each later round tries it once until
 *       the target answers. Whether it is kept does not depend on how the breaker and the rounds
 *       line up. It ends only at its age limit
 *       ({@link IdempotentExecutor.Builder#maxPendingAge}, 18 h by default, below the server's key
 *       retention): FAILED if no attempt can have reached the server, UNCERTAIN otherwise.</li>
 *   <li>When deliveries make no progress (every delivery started by a poll ends PENDING, UNCERTAIN,
 *       or FAILED without an answer from the server; or the journal cannot be read), the
 *       dispatcher backs off as a whole: the poll interval doubles up to
 *       {@link Builder#maxPollInterval}, and it logs one WARN that says what became of that poll's
 *       operations. The first delivery that makes progress resets the interval and logs one
 *       INFO; so does, when only the journal took it offline, the first poll that reads the
 *       journal again and finds nothing due (while offline, a submission waits for the next
 *       poll).</li>
 *   <li>{@link #shutdown(Duration)} drains the queue with a timeout; {@link #close()} stops at
 *       once. Either way, an operation not delivered stays PENDING in the journal, and an attempt
 *       on the wire is recorded when it ends (it is cancelled, never left half-written), so the
 *       next dispatcher delivers it with the same key.</li>
 * </ul>
 *
 * <p>Lifecycle: close the dispatcher first, then its {@link IdempotentExecutor}, then the journal
 * (try-with-resources in that order does it). The dispatcher never closes the executor or the
 * journal: they are the app's. Closing the executor first stops the dispatcher at its next poll
 * (it can deliver nothing through a closed executor): its handles complete with
 * {@link OperationPendingException}, and nothing is lost. An attempt still on the wire when the
 * executor closes is not recorded; its operation stays IN_FLIGHT until its lease expires, and the
 * next dispatcher then delivers it, with the same key, as ambiguous: at its first poll if it runs
 * on an executor with the same owner name, else once the lease has expired.
 *
 * <p>All timing uses the injected {@link Clock} and {@link Scheduler}; give the dispatcher the
 * executor's clock.
 *
 * <p>Due times and clock steps: a PENDING operation's next attempt time is journaled on the wall
 * clock, and the journal finds it due by the wall clock. So that a clock that steps back (an NTP
 * correction) does not hold an operation queued before the step for the length of the step, the
 * dispatcher also counts the wait that was chosen for it on its scheduler (which waits by delay, so
 * on a clock that does not step). The wait chosen is read off the journaled record: its
 * {@code nextAttemptAt} minus its {@code updatedAt}, both written at the same instant by whoever
 * left it PENDING (whatever policy, Retry-After, retry budget or breaker chose it):
 * <ul>
 *   <li>when one of its deliveries ends PENDING, that wait, counted from then, is also kept on the
 *       scheduler, and once it has passed the operation is delivered, whatever the wall clock
 *       says;</li>
 *   <li>at the first poll (after a restart only the journaled due times exist) and at each poll
 *       that finds the wall clock behind where an earlier one read it, the PENDING operations of
 *       registered names are read once, and each whose {@code updatedAt} lies after the clock's
 *       now (written on a clock that was ahead: this one before its step, or another host's) is
 *       delivered once its chosen wait has passed, counted from that poll.</li>
 * </ul>
 * Neither ever sends an operation before the wait chosen for it. Any other operation is left to
 * its journaled due time, so operations written after a step wait their backoff, however long.
 * Limits: an operation whose wait no delivery of this dispatcher kept, written more than a step's
 * length before the step and not due by then, still waits up to the step's length longer, and so
 * does an IN_FLIGHT operation whose holder died, when its lease's expiry was journaled on a
 * clock that was ahead (the journal's takeover check reads the wall clock). An operation is delivered this way only while the journal still holds it PENDING
 * with the due time its wait began with. At most 10,000 operations are kept at once; beyond that
 * they wait for their journaled due times.
 *
 * <p>Thread-safe: every method may be called from any thread. {@link #submit} and {@link #await}
 * read or write the journal on the calling thread; the others never read it.
 * Polls run on the scheduler; a delivery's callbacks run on the thread that completed it.
 */
public final class OutboxDispatcher implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(OutboxDispatcher.class);

  private enum State { NEW, RUNNING, DRAINING, STOPPED }

  // The parts, each package-private: Registration (per name: transport and callbacks, a sync
  // transport wrapped as WorkerPoolTransport), DeliveryTracker (operations in delivery, handles,
  // rounds) and Deliverer (one poll's deliveries); the shared PollLoop holds the poll schedule, the
  // backoff (the interval and being offline), the Error that broke it and the poller thread. This
  // class keeps the public API, the lifecycle and the worker pool it owns.
  private final IdempotentExecutor executor;
  private final Journal journal;
  private final Map<String, Registration> registrations;
  private final ExecutorService ownedWorkers;  // null if given workers, or if no transport is synchronous
  private final int pageSize;
  private final PollLoop loop;
  private final DeliveryTracker tracker;
  private final Deliverer deliverer;
  private final OwedOutcomes owed;
  private final DueDeadlines deadlines;
  private final Clock clock;
  private final Duration sweepEvery;
  // When a poll last swept the handles and looked for owed outcomes, or null before the first.
  // Read and written by polls only, which the loop runs one at a time, each after the last has
  // finished (its lock orders them).
  private Instant lastSweep;

  // Locking. `lock` guards the lifecycle: the fields below. The tracker and the loop guard their
  // own state with their own monitors; those are leaves, sometimes taken while holding `lock`,
  // never the other way round (the loop calls back, into poll() and stopAfter(), with no lock of
  // its own held). Under `lock` the dispatcher only reads and writes this state and schedules or
  // cancels tasks: journal reads, handle completion and callbacks happen outside it.
  private final Object lock = new Object();
  private State state = State.NEW;
  private Future<?> drainTimer;
  private final CompletableFuture<Boolean> drainResult = new CompletableFuture<>();  // thread-safe itself

  private OutboxDispatcher(Builder b) {
    this.executor = b.executor;
    this.journal = b.executor.journal();
    this.pageSize = b.pageSize;
    this.clock = b.clock;
    this.sweepEvery = b.pollInterval;
    PollLoop.Builder polls = PollLoop.builder(OutboxDispatcher.class, "idem-outbox", this::poll).clock(b.clock)
        .interval(b.pollInterval).maxInterval(b.maxPollInterval).onBroken(this::stopAfter);
    if (b.scheduler != null) {
      polls.scheduler(b.scheduler);
    }
    this.loop = polls.build();
    Executor workers = b.workers;
    // A transport may implement both interfaces; how it was registered decides how it runs.
    boolean needsWorkers = b.transports.values().stream().anyMatch(t -> t instanceof SyncOnly);
    if (workers == null && needsWorkers) {
      this.ownedWorkers = Executors.newFixedThreadPool(b.syncWorkers, PollLoop.daemonThreads("idem-outbox-worker"));
      workers = ownedWorkers;
    } else {
      this.ownedWorkers = null;
    }
    Map<String, Registration> regs = new HashMap<>();
    Duration maxWorkerWait = b.executor.leaseFor().dividedBy(2);
    for (Map.Entry<String, Object> e : b.transports.entrySet()) {
      AsyncTransport async = e.getValue() instanceof SyncOnly sync
          ? new WorkerPoolTransport(sync.transport(), workers, b.clock, maxWorkerWait)
          : (AsyncTransport) e.getValue();
      regs.put(e.getKey(), new Registration(async, b.onSuccess.get(e.getKey()), b.onFailure.get(e.getKey())));
    }
    this.registrations = Map.copyOf(regs);
    // A name not registered here is another instance's (or a resume handler's) to record: a handle
    // here must not take it from callbacks it does not know of.
    this.tracker = new DeliveryTracker(journal, b.clock, b.pageSize, id -> {
      Registration reg = registrations.get(id.operation());
      return reg != null && !reg.hasCallbacks();
    });
    this.deadlines = new DueDeadlines(journal, b.clock, loop.scheduler(), registrations.keySet(), b.pageSize);
    this.deliverer = new Deliverer(executor, b.clock, registrations, b.maxInFlight, b.pageSize, tracker, loop,
        deadlines, this::deliveryEnded);
    this.owed = new OwedOutcomes(journal, b.clock, registrations, tracker, b.executor.owner(), b.executor.leaseFor(),
        b.pageSize, this::isStopped);
  }

  private boolean isStopped() {
    synchronized (lock) {
      return state == State.STOPPED;
    }
  }

  /**
   * A builder for a dispatcher that delivers through {@code executor} (and its journal).
   *
   * @param executor the executor whose journal, retry policy, classifier, breaker and budget apply
   * @return a new builder with the defaults listed on each setter
   * @throws NullPointerException if {@code executor} is null
   */
  public static Builder builder(IdempotentExecutor executor) {
    return new Builder(executor);
  }

  /**
   * Starts polling: at once, then every poll interval. Operations already pending in the journal
   * (from before a restart, say) are delivered like submitted ones, and those still leased under
   * the executor's own owner name by an earlier incarnation are taken back at the first poll.
   *
   * @return this dispatcher
   * @throws IllegalStateException if it was already started or stopped
   */
  public OutboxDispatcher start() {
    synchronized (lock) {
      if (state != State.NEW) {
        throw new IllegalStateException("the dispatcher is " + state + "; start it once");
      }
      state = State.RUNNING;
      loop.start();
    }
    return this;
  }

  /**
   * Journals {@code operation} (durably, before this returns) and queues it for delivery. The
   * returned handle completes when the operation reaches a terminal state: with its
   * {@link Outcome} when it SUCCEEDED, or exceptionally with {@link OperationFailedException},
   * {@link OperationUncertainException} or {@link IdempotencyKeyReusedException}. It does not
   * complete while the operation is merely PENDING (breaker open, budget empty, target down):
   * queued operations wait, until their age limit
   * ({@link IdempotentExecutor.Builder#maxPendingAge}). If the dispatcher stops first, it completes with
   * {@link OperationPendingException}, and the operation stays PENDING in the journal.
   *
   * <p>If journaling fails, the handle is already failed ({@code JournalException}, or
   * {@link IdempotencyKeyReusedException} for a key journaled with another request) and nothing
   * will be sent. Submitting an operation the journal already holds returns a handle on it
   * (completed at once if it is terminal). Cancelling the handle does not cancel delivery. Whether
   * the handle is the outcome's recipient, recorded as such in the journal, or gets it beside the
   * name's outcome callbacks, see {@link Builder#register(String, Transport, Consumer, Consumer)}.
   *
   * @param operation the operation to journal and deliver
   * @return a handle on its terminal outcome, a {@link CompletableFuture#copy() copy} per call
   * @throws IllegalArgumentException if no transport is registered for the operation's name
   * @throws IllegalStateException if the executor is closed, or reports a failure of its background
   *     work (see {@link IdempotentExecutor}; this is the app's own call, so it receives that report);
   *     nothing was journaled
   * @throws NullPointerException if {@code operation} is null
   */
  public CompletableFuture<Outcome> submit(Operation operation) {
    Objects.requireNonNull(operation, "operation");
    if (!registrations.containsKey(operation.name())) {
      throw new IllegalArgumentException("no transport is registered for operation '" + operation.name()
          + "'; register one on the OutboxDispatcher builder");
    }
    synchronized (lock) {
      Error brokenBy = loop.brokenBy().orElse(null);
      if (brokenBy != null) {
        return CompletableFuture.failedFuture(new IllegalStateException("the dispatcher stopped after "
            + brokenBy + "; " + operation.id() + " was not journaled. Build a new OutboxDispatcher", brokenBy));
      }
      if (state == State.DRAINING || state == State.STOPPED) {
        return CompletableFuture.failedFuture(new IllegalStateException("the dispatcher is shutting down; "
            + operation.name() + " was not journaled"));
      }
    }
    OperationRecord record;
    try {
      record = executor.enqueue(operation);
    } catch (IdempotencyException e) {
      return CompletableFuture.failedFuture(e);
    }
    return handle(record, true);
  }

  /**
   * A handle on an operation submitted earlier or found in the journal, for example one that an
   * inline {@link IdempotentExecutor#execute} left PENDING with an {@link OperationPendingException}
   * because the retry budget was empty or the circuit breaker open. It completes like
   * {@link #submit}'s handle, whoever delivers the operation: this dispatcher (if a transport is
   * registered for its name), an inline caller, or another process. Operations delivered
   * elsewhere are noticed at the next polls.
   *
   * <p>If the dispatcher has stopped, the handle of an operation that is not terminal is already
   * failed with {@link OperationPendingException}. The handle is the outcome's recipient, and
   * records it, only if the name is registered here without callbacks; an outcome owed to the
   * name's callbacks stays owed to them, and so does one of a name not registered here, to whoever
   * delivers that name (see {@link Builder#register(String, Transport, Consumer, Consumer)}).
   *
   * @param id the operation
   * @return the handle; already failed with {@link IllegalArgumentException} if the journal has no
   *     such operation, or with the journal's exception if it cannot be read
   * @throws NullPointerException if {@code id} is null
   */
  public CompletableFuture<Outcome> await(OperationId id) {
    Objects.requireNonNull(id, "id");
    CompletableFuture<Outcome> existing = tracker.existingWaiter(id);
    if (existing != null) {
      return existing.copy();
    }
    Optional<OperationRecord> record;
    try {
      record = journal.find(id);
    } catch (IdempotencyException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (record.isEmpty()) {
      return CompletableFuture.failedFuture(new IllegalArgumentException("no such operation in the journal: " + id));
    }
    return handle(record.get(), false);
  }

  /**
   * The handle for {@link #submit} and {@link #await}: settled now if the record is terminal, else
   * completed when the operation is; {@code wake} asks for a poll, for a submitted operation.
   */
  private CompletableFuture<Outcome> handle(OperationRecord record, boolean wake) {
    if (record.state().isTerminal()) {
      return tracker.handOver(record);
    }
    synchronized (lock) {
      if (state == State.STOPPED) {
        // Stopped while the journal was read or written: the operation is PENDING, but nothing
        // here will complete a handle any more, so say so instead of returning one that hangs.
        return CompletableFuture.failedFuture(stoppedPending(record.id()));
      }
      CompletableFuture<Outcome> waiter = tracker.waiter(record.id());
      if (wake && state == State.RUNNING && !loop.isOffline()) {
        loop.wake();
      }
      return waiter.copy();
    }
  }

  /**
   * Drains the queue: stops accepting submissions and keeps delivering until no operation of a
   * registered name is PENDING in the journal or IN_FLIGHT under this executor's owner name or an
   * expired lease (which this dispatcher takes over), or until {@code timeout} passes on the
   * scheduler; then stops as {@link #close()} does. An operation IN_FLIGHT under another owner's
   * live lease is not waited for: in a fleet it is another instance's attempt on the wire, which
   * that instance records itself. Submissions from now on fail with
   * {@link IllegalStateException}. Called before {@link #start()}, it delivers the queue all the
   * same. Calling it again, or after {@link #close()}, changes nothing and returns the same result.
   *
   * @param timeout how long to keep delivering. A timeout
   *     above 100 years (such as {@code ChronoUnit.FOREVER.getDuration()}) is taken as 100 years:
   *     drain however long it takes
   * @return completes with true if the queue drained, false if the timeout (or a close) stopped it
   *     first; operations not delivered stay PENDING
   * @throws NullPointerException if {@code timeout} is null
   * @throws java.util.concurrent.RejectedExecutionException if the scheduler refuses the drain
   *     timer (one the app shut down); the dispatcher is then left as it was, and still takes
   *     submissions until closed
   */
  public CompletableFuture<Boolean> shutdown(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    synchronized (lock) {
      if (state == State.NEW || state == State.RUNNING) {
        boolean started = state == State.RUNNING;
        // The timer first: if the scheduler refuses it, the dispatcher is left as it was rather
        // than DRAINING with nothing to end the drain (and, if not started, nothing polling). The
        // timer's stop waits for this lock, so it cannot run before the state below is set.
        drainTimer = loop.scheduler().schedule(() -> stop(false), Checks.capped(timeout));
        state = State.DRAINING;
        if (started) {
          loop.wake();
        } else {
          loop.start();
        }
      }
    }
    return drainResult.copy();
  }

  /**
   * Stops at once: no more polls, deliveries in progress are cancelled (an operation waiting for
   * its next attempt stays PENDING; an attempt on the wire is recorded as ambiguous when it ends,
   * leaving the operation PENDING, as long as the executor is open; an attempt still queued for a
   * worker, of the dispatcher's own pool or of one given with {@link Builder#workers}, is dropped
   * unsent and not recorded), handles of operations it did not see end complete with
   * {@link OperationPendingException} (so does one that another instance ended since this
   * dispatcher last looked: the journal keeps that outcome, and {@link #await} on the next
   * dispatcher gives it), and the pools this dispatcher created are shut down. Returns at once: it
   * neither reads nor waits for the journal, nor closes the executor, which the app closes next. Nothing is lost: the next dispatcher on the same journal
   * delivers what is left. Idempotent.
   */
  @Override
  public void close() {
    stop(false);
  }

  /**
   * The operation names this dispatcher delivers: those registered on its builder. An operation of
   * another name is left where it is (another dispatcher's, or a resume handler's), so a caller that
   * journals for this dispatcher alone (as {@link #submit} does) can refuse any other name up front.
   *
   * @return the names, immutable (empty if the builder registered none)
   */
  public Set<String> operationNames() {
    return registrations.keySet();
  }

  /**
   * How many operations are being delivered right now, including those waiting between attempts;
   * at most {@link Builder#maxInFlight}.
   *
   * @return the number of operations in delivery, from 0 to maxInFlight
   */
  public int inDelivery() {
    return tracker.inDelivery();
  }

  /**
   * True while deliveries make no progress and polling is backed off.
   *
   * @return whether the dispatcher is backed off
   */
  public boolean isOffline() {
    return loop.isOffline();
  }

  /**
   * The current poll interval: the base interval, or longer while backed off.
   *
   * @return the interval until the next poll, between pollInterval and maxPollInterval
   */
  public Duration currentPollInterval() {
    return loop.interval();
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * One poll, run by the loop: start delivering what is due, settle the handles of operations
   * finished elsewhere and hand the callbacks a page of the outcomes the journal still owes them
   * ({@link OwedOutcomes}; both at most once per poll interval), then, while draining, check
   * whether the queue is empty (not when the journal could not be read). An unexpected RuntimeException here backs the loop
   * off.
   */
  private void poll() {
    synchronized (lock) {
      if (state == State.STOPPED) {
        return;  // a poll that was due as close() ran: the loop closes right after
      }
    }
    if (executor.isClosed()) {
      LOG.warn("OutboxDispatcher stopped: its IdempotentExecutor was closed (close the dispatcher first);"
          + " undelivered operations stay in the journal for the next dispatcher");
      stop(false);
      return;
    }
    // Not on every poll: each delivery that makes progress wakes one, and each sweep reads up to
    // pageSize handles from the journal, so sweeping on the wake-ups of a burst read the journal
    // about pageSize times per operation delivered. The handles of the dispatcher's own deliveries
    // complete as those end; the sweep is only for operations finished elsewhere, which a poll
    // interval's wait does not delay beyond what the regular polls always did.
    // Delivering first: the sweep and the hand-over read the journal on this thread, and a
    // restart's deliveries (its earlier incarnation's leased work first) should not wait for them.
    boolean journalRead = deliverer.deliverDue();
    Instant now = clock.instant();
    deadlines.scanIfStepped(now);
    if (sweepDue(now)) {
      lastSweep = now;
      tracker.sweep();
      owed.handOver();
    }
    if (journalRead) {
      checkDrained();
    }
  }

  /**
   * Whether this poll sweeps: a poll interval after the last sweep, or as soon as the clock stepped
   * back (an NTP correction), which would otherwise stop the sweeps for as long as the step while
   * the polls, scheduled by delay, go on. Duration.between, unlike lastSweep.plus(sweepEvery),
   * cannot overflow with a poll interval as long as the builder allows.
   */
  private boolean sweepDue(Instant now) {
    if (lastSweep == null) {
      return true;
    }
    Duration since = Duration.between(lastSweep, now);
    return since.isNegative() || since.compareTo(sweepEvery) >= 0;
  }

  /**
   * A delivery ended, and the dispatcher is not stopped. After progress, poll at once rather than
   * after the interval: the target is reachable and a slot is free for the next due operation.
   * While draining, every ending may be the last, so poll to notice the drain.
   */
  private void deliveryEnded(boolean progress) {
    synchronized (lock) {
      if ((progress && state == State.RUNNING) || state == State.DRAINING) {
        loop.wake();
      }
    }
  }

  /**
   * The loop stopped for an Error (OutOfMemoryError, StackOverflowError, a transport's or a
   * callback's own) in the poller or a delivery: what it left behind is unknown, so the dispatcher
   * stops rather than go on half-working, says so at ERROR, and from then on every handle and every
   * {@link #submit} fails with an exception that names the Error. The operations stay in the
   * journal for the next dispatcher (or {@code resumePending}).
   */
  private void stopAfter(Error error, String where) {
    LOG.error("OutboxDispatcher stopped: {} in {}; its operations stay in the journal for the next dispatcher",
        error.toString(), where, error);
    stop(false);
  }

  private void checkDrained() {
    synchronized (lock) {
      if (state != State.DRAINING || tracker.inDelivery() > 0) {
        return;
      }
    }
    try {
      Instant now = clock.instant();
      if (!hasQueued(OperationState.PENDING, now) && !hasQueued(OperationState.IN_FLIGHT, now)) {
        stop(true);
      }
    } catch (IdempotencyException | RuntimeException e) {
      LOG.debug("could not check whether the queue drained: {}", e.toString());
    }
  }

  /**
   * Whether the journal holds an operation of a registered name in {@code state} that is this
   * dispatcher's to deliver: not one IN_FLIGHT under another owner's lease that has not expired.
   * That is another live instance's attempt, which it records itself; waiting for it would keep a
   * rolling deploy's stopping instance waiting out its whole timeout while the others work.
   *
   * <p>Read by state and by the registered names (the names a poll reads), without locks and
   * without an instant: a read of the due order with the names, as a poll makes, would skip a row
   * another process holds locked on PostgreSQL ({@code SKIP LOCKED}: the drain then ended "drained"
   * with an operation of its names still queued), and could find every unfinished operation only by
   * asking for those due at a far future "now", which a journal whose times end sooner refuses. A
   * journal that filters the names while it reads ({@code InMemoryJournal}, {@code JdbcJournal})
   * hands over no other name's operations, so another service's backlog in a shared journal is not
   * read into this process by each drain check (which runs after each poll that leaves no delivery
   * running); one that keeps the SPI's default still reads it and keeps these names.
   */
  private boolean hasQueued(OperationState state, Instant now) throws IdempotencyException {
    if (registrations.isEmpty()) {
      return false;  // nothing of its own to wait for (and a read of no names is refused)
    }
    OperationId after = null;
    while (true) {
      List<OperationRecord> page = journal.findByState(state, registrations.keySet(), after, pageSize);
      if (page.isEmpty()) {
        return false;  // only an empty page is the last: a journal may return short ones
      }
      for (OperationRecord r : page) {
        if (registrations.containsKey(r.id().operation()) && !leasedByAnotherLiveOwner(r, now)) {
          return true;
        }
      }
      after = page.get(page.size() - 1).id();
    }
  }

  private boolean leasedByAnotherLiveOwner(OperationRecord r, Instant now) {
    return r.state() == OperationState.IN_FLIGHT && r.owner() != null && !r.owner().equals(executor.owner())
        && r.leaseExpiresAt() != null && r.leaseExpiresAt().isAfter(now);
  }

  private void stop(boolean drained) {
    DeliveryTracker.Closed closed;
    synchronized (lock) {
      if (state == State.STOPPED) {
        return;
      }
      state = State.STOPPED;
      if (drainTimer != null) {
        drainTimer.cancel(false);
        drainTimer = null;
      }
      // Closed under the lock, with the state: whoever holds the lock and sees STOPPED knows that
      // no delivery starts any more and no handle is left in the tracker.
      closed = tracker.close();
    }
    for (CompletableFuture<Outcome> f : closed.running()) {
      f.cancel(false);
    }
    // Not read from the journal first, for the outcome of one that ended elsewhere since the last
    // sweep: close returns at once, and a journal that answers slowly (a database gone away) would
    // hold it that long per handle. Such an outcome stays in the journal, owed to its recipient.
    for (Map.Entry<OperationId, CompletableFuture<Outcome>> e : closed.orphans().entrySet()) {
      e.getValue().completeExceptionally(stoppedPending(e.getKey()));
    }
    // Attempts still queued for a worker, of its own pool or the app's, were never sent: told so,
    // their operations go back to PENDING instead of staying IN_FLIGHT under this dispatcher's
    // lease, and no worker sends them after this close.
    for (Registration reg : registrations.values()) {
      if (reg.transport() instanceof WorkerPoolTransport pool) {
        pool.close();
      }
    }
    if (ownedWorkers != null) {
      ownedWorkers.shutdownNow();  // what its queue held was dropped just above
    }
    deadlines.close();
    loop.close();  // last: it interrupts its thread, which may be the one running this
    drainResult.complete(drained);
    LOG.debug("OutboxDispatcher stopped ({})", drained ? "drained" : "operations left PENDING");
  }

  private OperationPendingException stoppedPending(OperationId id) {
    Error error = loop.brokenBy().orElse(null);
    return new OperationPendingException("the OutboxDispatcher stopped" + (error == null ? "" : " after " + error)
        + " before delivering " + id + "; it stays in the journal with its key, PENDING unless another instance"
        + " ended it meanwhile, and the next dispatcher (or resumePending) delivers it; await(id) there gives its"
        + " outcome", error, id, List.of(), null);
  }

  /** A transport registered as synchronous, to run on the worker pool. */
  private record SyncOnly(Transport transport) {}

  /**
   * Builds an {@link OutboxDispatcher}. Register at least the transports for the operation names
   * to deliver; every other setting has a default. Every method throws
   * {@link NullPointerException} for a null argument. Not thread-safe: build on one thread, then
   * share the dispatcher.
   */
  public static final class Builder {
    private final IdempotentExecutor executor;
    private final Map<String, Object> transports = new HashMap<>();
    private final Map<String, Consumer<Outcome>> onSuccess = new HashMap<>();
    private final Map<String, Consumer<OperationException>> onFailure = new HashMap<>();
    private Clock clock = Clock.systemUTC();
    private Scheduler scheduler;
    private Executor workers;
    private int syncWorkers = 4;
    private int maxInFlight = 32;
    private int pageSize = 100;
    private Duration pollInterval = Duration.ofSeconds(1);
    private Duration maxPollInterval = Duration.ofMinutes(1);

    private Builder(IdempotentExecutor executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
    }

    /**
     * Delivers operations named {@code operationName} through a synchronous transport, which runs
     * on the worker pool. The transport must re-apply the secret headers kept out of the journal.
     *
     * <p>Without callbacks, an outcome's recipient is a handle ({@link #submit}, {@link #await}):
     * completing one with a queued operation's outcome records in the journal that the app received
     * it, so that {@code resumePending} does not hand it to a resume handler again; so does this
     * dispatcher's own delivery of it, handle or not (the app asked to hear of none). An outcome the
     * journal still owes (a crash, or a failed receipt write, caught the operation between its end
     * and that record; or another instance or an inline call ended it and no handle here got it)
     * stays owed: no dispatcher records it, so that a resume handler for this name is told of it.
     * Such outcomes are the deliveries in flight at each crash, the queued operations
     * {@code reconcileUncertain} settled (their new outcome is owed again) and those an inline call
     * ended; they stay in the
     * journal ({@code Journal.purge} keeps them) until a {@code resumePending} with a handler for
     * this name hands them over, after which a purge deletes them. An app that runs no
     * {@code resumePending} (the Spring starter runs none) hands them over by running one with a
     * handler for this name at start-up.
     *
     * @param operationName the operation name (as in the operation's identity) to deliver
     * @param transport sends one attempt; called on the worker threads, so it must be thread-safe
     * @return this builder
     * @throws IllegalArgumentException if the name is already registered
     */
    public Builder register(String operationName, Transport transport) {
      return add(operationName, new SyncOnly(Objects.requireNonNull(transport, "transport")), null, null);
    }

    /**
     * As {@link #register(String, Transport)}, with callbacks for the outcomes of the operations of
     * this name. The callbacks are the recipient of every such outcome, and the journal records
     * one as received only once they were told of it:
     * <ul>
     *   <li>They are told at once of each operation this dispatcher's executor ends: its
     *       deliveries (including those found in the journal after a restart, which have no
     *       handle, and those it ends at their age limit).</li>
     *   <li>One that another instance of a fleet ended is that instance's to tell its own callbacks
     *       and record. Any outcome the journal still owes (a queued operation that ended with no
     *       receipt recorded: that instance stopped before its callback or before the record, the
     *       record failed, or an inline call ended it, whose caller got it but records nothing) is
     *       handed to them, read from the journal ({@code fromJournal()} true), as
     *       {@code resumePending} hands it to a resume handler: from the first poll on if it
     *       was written under the executor's own owner name by an earlier incarnation, else once
     *       its terminal write is older than the executor's
     *       {@link IdempotentExecutor.Builder#leaseFor lease}. Each poll interval reads one page
     *       ({@link Builder#pageSize}) of what the journal owes, after the poll's deliveries
     *       started, so an earlier incarnation's outcome is handed within ceil(backlog / pageSize)
     *       poll intervals of the first poll, the backlog being the owed outcomes that sort ahead
     *       of it (of any name, this dispatcher's or not), and another's within a pass over them
     *       once past the lease.</li>
     *   <li>A handle ({@link #submit}, {@link #await}) on such an operation completes with its
     *       outcome as well, but does not take it from the callbacks: it records nothing. Nor does
     *       a handle on an operation whose name this dispatcher does not register (an
     *       {@link #await} on an instance that does not deliver that name): the callbacks of the
     *       instances that do, or a resume handler, are its recipient.</li>
     * </ul>
     * So a callback may see an outcome twice, never zero times, and should deduplicate on
     * {@code operationId()}. Callbacks run on the thread that completed the delivery (the poller's,
     * for an outcome handed from the journal); they must be quick and must not throw (an exception
     * is logged and ignored, and the outcome counts as told). A callback handed an outcome from the
     * journal when the dispatcher stops ({@link #close()} interrupts the poller, and so a callback
     * that blocks) does not count as told: the outcome stays owed, for the next dispatcher, and
     * no further one is handed.
     *
     * @param operationName the operation name (as in the operation's identity) to deliver
     * @param transport sends one attempt; called on the worker threads, so it must be thread-safe
     * @param onSuccess receives SUCCEEDED outcomes
     * @param onFailure receives FAILED and UNCERTAIN endings (a 422 arrives as
     *     {@link OperationFailedException})
     * @return this builder
     * @throws IllegalArgumentException if the name is already registered
     */
    public Builder register(String operationName, Transport transport, Consumer<Outcome> onSuccess,
        Consumer<OperationException> onFailure) {
      return add(operationName, new SyncOnly(Objects.requireNonNull(transport, "transport")),
          Objects.requireNonNull(onSuccess, "onSuccess"), Objects.requireNonNull(onFailure, "onFailure"));
    }

    /**
     * Delivers operations named {@code operationName} through an asynchronous transport. The
     * transport must re-apply the secret headers kept out of the journal.
     *
     * @param operationName the operation name (as in the operation's identity) to deliver
     * @param transport sends one attempt without blocking
     * @return this builder
     * @throws IllegalArgumentException if the name is already registered
     */
    public Builder registerAsync(String operationName, AsyncTransport transport) {
      return add(operationName, Objects.requireNonNull(transport, "transport"), null, null);
    }

    /**
     * As {@link #registerAsync(String, AsyncTransport)}, with outcome callbacks, which behave as
     * for {@link #register(String, Transport, Consumer, Consumer)}.
     *
     * @param operationName the operation name (as in the operation's identity) to deliver
     * @param transport sends one attempt without blocking
     * @param onSuccess receives SUCCEEDED outcomes
     * @param onFailure receives FAILED and UNCERTAIN endings
     * @return this builder
     * @throws IllegalArgumentException if the name is already registered
     */
    public Builder registerAsync(String operationName, AsyncTransport transport, Consumer<Outcome> onSuccess,
        Consumer<OperationException> onFailure) {
      return add(operationName, Objects.requireNonNull(transport, "transport"),
          Objects.requireNonNull(onSuccess, "onSuccess"), Objects.requireNonNull(onFailure, "onFailure"));
    }

    private Builder add(String name, Object transport, Consumer<Outcome> ok, Consumer<OperationException> failed) {
      Objects.requireNonNull(name, "operationName");
      if (transports.containsKey(name)) {
        throw new IllegalArgumentException("operation '" + name + "' is already registered");
      }
      transports.put(name, transport);
      if (ok != null) {
        onSuccess.put(name, ok);
        onFailure.put(name, failed);
      }
      return this;
    }

    /**
     * The time source; default {@link Clock#systemUTC()}. Use the executor's clock.
     *
     * @param clock the clock for poll scheduling and back-off
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Runs polls and the drain timeout; default a daemon thread owned (and stopped) by the
     * dispatcher.
     *
     * @param scheduler the scheduler; one given here is not stopped by the dispatcher
     * @return this builder
     */
    public Builder scheduler(Scheduler scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Runs synchronous transports; default a fixed pool of {@link #syncWorkers} daemon threads
     * owned by the dispatcher. An executor given here is not shut down by the dispatcher, but the
     * attempts it still holds when the dispatcher stops are not sent: a worker that takes one then
     * runs nothing.
     *
     * <p>An attempt is claimed when it is queued here; one that waits for a worker for half the
     * executor's {@link IdempotentExecutor.Builder#leaseFor lease} or longer is not sent (another
     * owner may have taken its operation over by then) and counts as an attempt not sent. Size the
     * pool so that attempts do not wait that long.
     *
     * @param workers runs the synchronous transports
     * @return this builder
     */
    public Builder workers(Executor workers) {
      this.workers = Objects.requireNonNull(workers, "workers");
      return this;
    }

    /**
     * Sets the number of threads in the default worker pool.
     *
     * @param n threads of the default worker pool, at least 1; default 4
     * @return this builder
     * @throws IllegalArgumentException if below 1
     */
    public Builder syncWorkers(int n) {
      this.syncWorkers = Checks.atLeastOne(n, "syncWorkers");
      return this;
    }

    /**
     * Sets how many operations may be in delivery at once (including those waiting between
     * attempts).
     *
     * @param n operations in delivery at once (including those waiting between attempts); default
     *     32
     * @return this builder
     * @throws IllegalArgumentException if below 1
     */
    public Builder maxInFlight(int n) {
      this.maxInFlight = Checks.atLeastOne(n, "maxInFlight");
      return this;
    }

    /**
     * Sets the page size: operations read from the journal per page, and handles checked and owed
     * outcomes read per sweep.
     *
     * @param n operations read from the journal per page, and handles checked against the journal
     *     and owed outcomes read per sweep (for operations settled elsewhere, and outcomes the
     *     journal still owes the callbacks; one sweep per poll interval at most), at least 1;
     *     default 100
     * @return this builder
     * @throws IllegalArgumentException if below 1
     */
    public Builder pageSize(int n) {
      this.pageSize = Checks.atLeastOne(n, "pageSize");
      return this;
    }

    /**
     * Sets the poll interval while deliveries make progress.
     *
     * @param interval the poll interval while deliveries make progress, positive; default 1 s
     * @return this builder
     * @throws IllegalArgumentException if zero, negative or above 100 years
     */
    public Builder pollInterval(Duration interval) {
      this.pollInterval = Checks.positive(interval, "pollInterval");
      return this;
    }

    /**
     * Sets the longest poll interval while backed off.
     *
     * @param interval the longest poll interval while backed off, positive; default 1 min
     * @return this builder
     * @throws IllegalArgumentException if zero, negative or above 100 years
     */
    public Builder maxPollInterval(Duration interval) {
      this.maxPollInterval = Checks.positive(interval, "maxPollInterval");
      return this;
    }

    /**
     * Builds the dispatcher; call {@link OutboxDispatcher#start()} to begin delivering.
     *
     * @return a new, thread-safe dispatcher that is not yet polling
     * @throws IllegalArgumentException if maxPollInterval is shorter than pollInterval
     */
    public OutboxDispatcher build() {
      if (maxPollInterval.compareTo(pollInterval) < 0) {
        throw new IllegalArgumentException("maxPollInterval " + maxPollInterval + " is shorter than pollInterval "
            + pollInterval);
      }
      return new OutboxDispatcher(this);
    }
  }
}
