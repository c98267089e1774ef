package dev.idem.core;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.event.IdemListener;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.http.ProtocolHeaders;
import dev.idem.core.resume.ExpiredPendingAction;
import dev.idem.core.resume.Reconciler;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.AttemptTimeoutException;
import dev.idem.core.spi.Scheduler;
import dev.idem.core.spi.Sleeper;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.internal.AsyncDriver;
import dev.idem.core.internal.AttemptLoop;
import dev.idem.core.internal.Checks;
import dev.idem.core.internal.DueRule;
import dev.idem.core.internal.EngineSettings;
import dev.idem.core.internal.ExecutorAccess;
import dev.idem.core.internal.ExecutorLifecycle;
import dev.idem.core.internal.ExecutorPools;
import dev.idem.core.internal.Futures;
import dev.idem.core.internal.HostGuard;
import dev.idem.core.internal.InputChecks;
import dev.idem.core.internal.KeyRetention;
import dev.idem.core.internal.PendingResumer;
import dev.idem.core.internal.SecretFilter;
import dev.idem.core.internal.SyncDriver;
import dev.idem.core.internal.UncertainReconciler;
import dev.idem.core.internal.SingleFlight;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/**
 * Executes logical operations with one key across every attempt: journals the operation before
 * the first byte is sent, retries with bounded, jittered backoff, keeps safe, ambiguous, transient
 * and permanent failures apart, and reports success only when a response says so.
 *
 * <pre>{@code
 * IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).build();
 * Outcome out = idem.execute(Operation.builder("create-order", snapshot).build(), transport);
 * }</pre>
 *
 * <p>What each call ends in:
 * <ul>
 *   <li>{@link Outcome}: SUCCEEDED; the response is the server's (perhaps a replay).</li>
 *   <li>{@link OperationFailedException}: FAILED; nothing took effect as far as anyone can know.</li>
 *   <li>{@link OperationUncertainException}: UNCERTAIN; an attempt may have taken effect.</li>
 *   <li>{@link OperationPendingException}: still PENDING (interrupted, cancelled, owned elsewhere,
 *       or, for a resume, not sent because the target is unreachable).</li>
 *   <li>{@link IdempotencyKeyReusedException}: the key belongs to another request (FAILED, when the
 *       server says so and no earlier attempt may have taken effect; after one that may have, the
 *       server's refusal ends the operation UNCERTAIN instead, with
 *       {@link OperationUncertainException}).</li>
 *   <li>{@link JournalException}: the journal failed; if it failed at begin, nothing was sent by
 *       this call (unless the message says the operation may have been journaled: then a resume
 *       may send it with its key; retry with the same key).</li>
 *   <li>{@link IllegalArgumentException}, thrown at once by {@code execute}, {@code executeAsync} and
 *       {@code enqueue}: the input cannot be journaled and sent faithfully (a header name or value
 *       with CR/LF or another invalid character, a control character or unpaired surrogate in the
 *       scope, operation name or reference, a query or path parameter that looks like a
 *       credential; see {@link Builder#allowQueryParameters}). Nothing was journaled or sent.</li>
 *   <li>{@link IllegalStateException}, thrown at once by the same methods: an operation made with
 *       {@link Operation#forReference} on an executor without {@link Builder#referenceKeySecret};
 *       or the executor is closed, or reports a background failure (see "Threads and lifecycle").
 *       Nothing was journaled or sent.</li>
 * </ul>
 *
 * <p>A per-attempt timeout ({@link RetryPolicy#attemptTimeout()}) applies to {@code execute} and
 * {@code executeAsync} alike. On the synchronous path the executor's scheduler interrupts the
 * sending thread when it runs out (transports that block in an interruptible call, such as
 * java.net.http's {@code send}, stop at once; adapters over clients that do not heed interrupts,
 * such as OkHttp, bound the attempt themselves); either way the attempt is recorded as AMBIGUOUS
 * ({@link AttemptTimeoutException}: it may have reached the server) and retried with the same key.
 *
 * <p>Within one executor, concurrent calls for the same {@link OperationId} are single-flight: the
 * second waits for the first one's outcome instead of sending.
 *
 * <h2>Threads and lifecycle</h2>
 * Thread-safe: share one executor across the app's threads; every method may be called from any
 * thread. {@link #execute}, {@link #resume} and {@link #resumePending} run on the calling thread
 * and do their journal work there. Asynchronous executions do theirs on the executor's pool (see
 * {@link Builder#asyncExecutor}), never on a scheduler thread: timers (backoff, attempt timeout)
 * only hand work to the pool, so a slow journal delays no timer, of this executor or another.
 * Cancelling a future returns at once and never waits for the journal.
 *
 * <p>By default each executor owns its threads: one scheduler thread ({@code idem-scheduler-N-1})
 * and a bounded pool ({@code idem-async-N-M}), daemon threads made on first use, so a purely
 * synchronous user without an attempt timeout starts none. A scheduler or executor given to the
 * {@link Builder} stays the app's: the executor uses it and never shuts it down.
 *
 * <p>{@link #close()} ends the executor; use try-with-resources, or close it when the app stops
 * (before closing the journal, which stays the app's and is never closed here):
 * <ul>
 *   <li>Calls from then on ({@code execute}, {@code executeAsync}, {@code enqueue}, {@code resume},
 *       {@code resumeAsync}, {@code resumePending}, {@code redrive}, {@code reconcileUncertain})
 *       throw {@link IllegalStateException} at once, naming close; nothing is journaled or sent.
 *       The read-only methods ({@code find}, {@code list}...) still read the journal.</li>
 *   <li>Asynchronous executions in progress: their futures complete at once, exceptionally, with
 *       {@link OperationPendingException}; each operation stays in the journal with its key (PENDING,
 *       or IN_FLIGHT until this executor's lease on it expires if an attempt was on the wire), and a
 *       resume or an outbox on a new executor sends it again with the same key. An asynchronous
 *       call joined to a synchronous execution of the same operation (single-flight) drives none:
 *       it ends with that execution's outcome, as below. A call of either kind waiting for a
 *       cancelled asynchronous execution of the same operation to write its last journal record
 *       ({@link #executeAsync}) ends at once with {@link OperationPendingException} too. An
 *       asynchronous execution closed while it still writes the journal (a retry's claim, given
 *       back on the pool) keeps its operation's single flight until that write is done: a call for
 *       the same operation still in progress then (a {@code resume} close waits for) ends with
 *       {@link OperationPendingException} rather than take the claim over.</li>
 *   <li>Synchronous executions in progress on other threads ({@code execute}, {@code resume}): an
 *       attempt on the wire runs to its end and is recorded; the call then stops before its next
 *       attempt (or its next backoff) with {@link OperationPendingException}; a call waiting out a
 *       backoff is woken (its thread's interrupt, which is cleared before the call returns) and
 *       stops the same way. A call of either kind waiting for such an execution of the same
 *       operation in this process (single-flight, above) ends with that execution's outcome, as
 *       without close, so that it is told what the journal keeps: at once if that execution was in
 *       a backoff (both then end PENDING), else once its attempt on the wire is recorded. Close
 *       waits for these calls to return, so that the journal can be closed after it.</li>
 *   <li>The other calls in progress on other threads that write the journal there ({@code enqueue},
 *       so an outbox {@code submit}; {@code redrive}; {@code reconcileUncertain};
 *       {@code resumePending}, on the caller's thread and on the threads of its own that
 *       {@link Builder#resumeConcurrency} gives it; and the part of {@code executeAsync} and
 *       {@code resumeAsync} that runs on the caller's thread: the begin, the first claim, an expiry
 *       at the age limit, and so does their new start after waiting on a single flight, on whichever
 *       thread it runs): close waits for them too. A {@code reconcileUncertain} closed during its
 *       pass writes nothing after its current operation and throws {@link IllegalStateException};
 *       the operations it did not settle stay UNCERTAIN. A {@code resumePending} closed during its
 *       pass finishes the operations it is resuming (as {@code execute} above), starts no other,
 *       gives back the claims it made for operations it did not start (they stay PENDING with their
 *       keys), records the outcomes its handlers received, and throws
 *       {@link IllegalStateException}; a wait for leases held elsewhere is woken the same way. A
 *       call made from inside another (a transport, a reconciler or a resume handler that calls
 *       the executor, or calls close) is part of that call, never waited for by a close on its own
 *       thread, nor on the other threads of a {@code resumePending} it runs in.</li>
 *   <li>Its own scheduler and pool are shut down. Close waits up to 10 seconds in all for journal
 *       work already running, for the synchronous calls above and for synchronous attempts'
 *       timers, then interrupts its own threads (never the app's: a synchronous attempt still on
 *       the wire then is recorded only if the journal is still open when it ends). Calling close
 *       again does nothing but wait for the first close to end.</li>
 * </ul>
 *
 * <p>Background work that fails where no future can report it (the journal write that leaves a
 * cancelled operation PENDING, say) is logged at WARN, and the app's next call that would journal
 * or send throws an {@link IllegalStateException} with that failure as its cause, once; nothing was
 * journaled or sent for that call, and the operations concerned stay in the journal with their keys.
 * The deliveries of an {@link dev.idem.core.outbox.OutboxDispatcher} on this executor are not the
 * app's calls: they leave that report for the app.
 */
public final class IdempotentExecutor implements AutoCloseable {
  static {
    ExecutorAccess.install(new ExecutorAccess() {
      @Override
      public boolean runsHere(IdempotentExecutor executor, OperationId id) {
        return executor.singleFlight.isRunning(id);
      }

      @Override
      public CompletableFuture<Outcome> resumeAsync(IdempotentExecutor executor, OperationRecord asRead,
          AsyncTransport transport) {
        return executor.resumeAsync(asRead.id(), transport, Objects.requireNonNull(asRead, "asRead"));
      }

      @Override
      public ExecutorLifecycle lifecycle(IdempotentExecutor executor) {
        return executor.lifecycle;
      }

      @Override
      public SecretFilter secrets(IdempotentExecutor executor) {
        return executor.secrets;
      }
    });
  }

  private final EngineSettings settings;
  private final RetryPolicy policy;
  private final Fingerprinter fingerprinter;
  private final Sleeper sleeper;
  private final ExecutorLifecycle lifecycle;
  private final SecretFilter secrets;
  private final SingleFlight singleFlight = new SingleFlight();
  private final KeyRetention retention;
  /** Never logged, journaled or shown by toString; a copy the caller cannot change. */
  private final byte[] referenceKeySecret;
  private final int resumeConcurrency;
  /** The replay header's name as the builder was given it. */
  private final String replayHeader;

  private IdempotentExecutor(Builder b) {
    RetryBudget budget = b.retryBudget != null ? b.retryBudget : RetryBudget.tokenBucket(b.clock);
    // The engine looks the replay header up in every success: by its lower-case name, which the
    // snapshots' header lookup then takes as it is instead of lower-casing a copy per call.
    this.replayHeader = b.replayHeader;
    this.secrets = new SecretFilter(b.secretHeaders, b.allowedHeaders, b.allowedQueryParameters);
    this.settings = new EngineSettings(b.journal, b.classifier, b.clock, b.random, b.owner, b.leaseFor,
        b.replayHeader.toLowerCase(Locale.ROOT), b.listener, new HostGuard(b.breakerSettings, budget, b.clock, b.listener), b.protocol,
        secrets);
    this.policy = b.policy;
    this.resumeConcurrency = b.resumeConcurrency;
    this.fingerprinter = b.fingerprinter;
    this.sleeper = b.sleeper;
    this.lifecycle = new ExecutorLifecycle(new ExecutorPools(b.scheduler, b.asyncExecutor));
    this.retention = new KeyRetention(settings, b.serverKeyRetention, b.maxPendingAgeOrDefault(),
        b.expiredPendingAction);
    this.referenceKeySecret = b.referenceKeySecret;
  }

  /**
   * A builder with the defaults listed on each setter.
   *
   * @return a new builder; builders are not thread-safe, the executors they build are
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Executes an operation on the calling thread, waiting between attempts with the sleeper.
   *
   * <p>An operation the journal holds already, unfinished (a call that ended PENDING, executed
   * again), is sent again with its key as {@link #resume} would send it, and, as there, not if it
   * reached its age limit ({@link Builder#maxPendingAge}): it then ends FAILED if no attempt can
   * have reached the server, UNCERTAIN otherwise, and nothing is sent (see
   * {@link ExpiredPendingAction}). Nor is it retried at or past that limit: a retry that would fall
   * there, or a backoff that ends there, is not sent, and the call ends the operation the same way.
   * An operation this call creates has no age limit within the call: its policy's deadline bounds it.
   *
   * @param operation the logical operation: its identity (and so its key), request and optional
   *     policy; journaled before anything is sent
   * @param transport sends one attempt; called once per attempt with the same key
   * @return the outcome of a SUCCEEDED operation
   * @throws IdempotencyException as listed in the class comment
   */
  public Outcome execute(Operation operation, Transport transport) throws IdempotencyException {
    Objects.requireNonNull(transport, "transport");
    // Counted until it returns: close waits for it (the app closes the journal after close).
    lifecycle.enterMarkedSync("execute");
    try {
      return executeCounted(operation, transport);
    } finally {
      lifecycle.exitSync();
    }
  }

  private Outcome executeCounted(Operation operation, Transport transport) throws IdempotencyException {
    NewOperation op = newOperation(operation, false);
    RetryPolicy p = policyFor(operation);
    while (true) {
      // The flight is joined before the begin: the leader's begin claims the operation it creates,
      // and a concurrent execution in this process must join that flight, never claim it over.
      SingleFlight.Ticket ticket = singleFlight.join(op.id());
      if (ticket.leader()) {
        BeginResult begun = beginLeading(op, ticket);
        return lead(ticket, begun.record(), begun.lease(), false, operation.request(), transport, p, true, true,
            begun.created(), null);
      }
      OperationRecord record = begin(op).record();
      if (record.state().isTerminal()) {
        return SyncDriver.finish(AttemptLoop.settled(settings, retention, record));
      }
      Outcome out = SyncDriver.awaitLeader(op.id(), ticket.result(), lifecycle);
      if (out != null) {
        return out;
      }
    }
  }

  /**
   * @param named whether the app's call named this operation ({@code resume(id)}): its claim may wait
   *     briefly for another process holding it ({@link Journal#claimWaiting}); false for a resume pass
   * @param fenced as for {@link #lead}
   * @param atAgeLimit run if this call (not an execution it waited for) ends the operation at its
   *     age limit, sending nothing, before its failure is thrown; null if no one asks (a resume
   *     pass counts it as expired)
   */
  private Outcome runSync(OperationRecord record, RequestSnapshot request, Transport transport, RetryPolicy p,
      boolean inline, boolean named, boolean fenced, Runnable atAgeLimit)
      throws IdempotencyException {
    while (true) {
      if (record.state().isTerminal()) {
        return SyncDriver.finish(AttemptLoop.settled(settings, retention, record));
      }
      SingleFlight.Ticket ticket = singleFlight.join(record.id());
      if (ticket.leader()) {
        return lead(ticket, expiredLeading(record, ticket, atAgeLimit), null, fenced, request, transport, p, inline,
            named, false, atAgeLimit);
      }
      Outcome out;
      try {
        out = SyncDriver.awaitLeader(record.id(), ticket.result(), lifecycle);
      } catch (OperationPendingException e) {
        if (!fenced || !SingleFlight.leaderCancelled(e)) {
          throw e;
        }
        out = null; // the execution waited for was cancelled in its backoff: as ended not begun, below
      }
      if (out != null) {
        return out;
      }
      if (fenced) {
        // The execution waited for ended not begun (a cancelled call giving its claim back, or
        // cancelled in its backoff): the record is no longer as read, and fenced on it the claim
        // would refuse an operation due and held by no one. Read again, sent only if still due, and
        // fenced on that read.
        record = dueAfterFollowing(record);
      }
    }
  }

  /**
   * {@code record} as the journal holds it now, for a call fenced on its read that waited for
   * another execution of it here, which ended not begun: terminal, unchanged, or due for this owner.
   *
   * @throws OperationPendingException if it changed and is not due (another instance sent it and
   *     queued it until its backoff or the server's {@code Retry-After} meanwhile), or is gone
   */
  private OperationRecord dueAfterFollowing(OperationRecord record) throws IdempotencyException {
    OperationRecord now = settings.journal().find(record.id()).orElse(null);
    if (now == null) {
      // Finished by another instance and purged, or deleted, meanwhile: nothing to send. Told as
      // not sent by this call, so that a resume pass goes on with its other operations.
      throw new OperationPendingException("gone from the journal while this call waited for another execution of"
          + " it here (finished and purged elsewhere, or deleted); nothing was sent", null, record.id(),
          record.attempts(), null);
    }
    boolean unchanged = now.state() == record.state() && now.generation() == record.generation();
    // Unchanged (the execution waited for wrote nothing), it is sent as the caller decided: a wall
    // clock stepped back meanwhile must not leave it, as a resume pass's own re-read rules.
    if (!unchanged && !now.state().isTerminal()
        && !DueRule.isDueFor(now, settings.owner(), settings.clock().instant())) {
      throw new OperationPendingException("not due: changed while this call waited for another execution of it"
          + " here, it is next due at " + now.nextAttemptAt(), null, now.id(), now.attempts(),
          now.storedResponse().orElse(null));
    }
    return now;
  }

  /**
   * Runs the execution the caller leads, under the begin's claim if there was one, and hands its
   * outcome to the flight's followers.
   *
   * @param fenced whether the first claim (with {@code claimed} null) takes the operation only if
   *     it is still as {@code record} (see {@link AttemptLoop#fenceFirstClaimOn})
   * @param created whether this call's begin created the operation: an inline call is then not
   *     subject to its age limit; one that found it journaled already is ({@link KeyRetention})
   * @param atAgeLimit as for {@link #runSync}: run if the execution's claim before an attempt ends
   *     the operation at its age limit ({@link AttemptLoop#endedAtAgeLimit}); null if no one asks
   */
  private Outcome lead(SingleFlight.Ticket ticket, OperationRecord record, Lease claimed, boolean fenced,
      RequestSnapshot request, Transport transport, RetryPolicy p, boolean inline, boolean named, boolean created,
      Runnable atAgeLimit) throws IdempotencyException {
    AttemptLoop loop = record.state().isTerminal() ? null
        : new AttemptLoop(settings, record, claimed, p, inline, named, created, retention);
    if (loop != null && claimed == null && fenced) {
      // A resume pass's operation its batch did not claim, read and found due a moment ago: as for
      // an outbox delivery (leadAsync), its first claim takes it only if unchanged since.
      loop.fenceFirstClaimOn(record);
    }
    try {
      Outcome out = loop == null ? SyncDriver.finish(AttemptLoop.settled(settings, retention, record))
          : SyncDriver.drive(loop, request, record.id().key(), transport, sleeper, lifecycle);
      ticket.result().complete(out);
      return out;
    } catch (Throwable e) {
      // Any Throwable, also a checked one a transport threw without declaring it: a single flight
      // left uncompleted makes every concurrent call of the operation wait forever.
      if (atAgeLimit != null && loop != null && loop.endedAtAgeLimit()) {
        atAgeLimit.run();
      }
      ticket.result().completeExceptionally(e);
      throw e;
    } finally {
      singleFlight.leave(record.id(), ticket);
    }
  }

  /**
   * Resumes the operations that are due in the journal, typically once at startup and then
   * periodically: each is sent again with its stored key and snapshot through the transport of the
   * handler registered for its operation name, and its outcome goes to that handler. Operations
   * are read page by page (100 at a time), so memory stays flat however many are pending, in the
   * order of {@link Journal#findDue(java.time.Instant, String, OperationRecord, int)}, the rule an
   * {@code OutboxDispatcher} follows too: those leased under this executor's own
   * {@link Builder#owner} first, then the rest oldest due first. They run with the executor's
   * default retry policy, one after another on the calling thread, or up to
   * {@link Builder#resumeConcurrency} at once. Before that, each handler gets the outcomes of
   * queued operations that the journal still owes it, and every outcome a handler receives is
   * recorded, so no later resume hands it again (see {@link ResumeHandler}).
   *
   * <p>While the target is unreachable (an attempt certainly not sent: connection refused, DNS
   * failure, no route, breaker open, budget empty), an operation is not failed: after its round of
   * attempts it stays PENDING with its key, due again after the policy's {@code maxDelay}, and is
   * counted in {@link ResumeSummary#stillPending()}; its handler gets an
   * {@link OperationPendingException}. Later passes try such an operation once each until the
   * target answers. An operation that reaches its age limit ({@link Builder#maxPendingAge}, below
   * the server's key retention) is not sent again: it ends FAILED if no attempt can have reached
   * the server, UNCERTAIN otherwise (see {@link ExpiredPendingAction}). Operations whose name has
   * no handler are left as they are and counted as unhandled. A name the map holds with a null
   * value has no handler: a map filled from optional configuration ("no handler for this name in
   * this deployment") works as one without the name, with one lane or several, rather than fail the
   * whole pass for it, as a pass one at a time always treated it.
   *
   * <p>A handler whose {@link ResumeHandler#transport()} throws a RuntimeException or returns null
   * gets an {@link OperationPendingException}, its operation stays PENDING, unsent, and the pass
   * goes on with the others. If it throws an Error, the pass ends with that Error (after the
   * operations being resumed on other lanes end), as any Error from the app's code does: that
   * operation stays PENDING, unsent, and so do the others the pass did not start.
   *
   * <p>Operations IN_FLIGHT under a live lease are looked at too. Those leased under this
   * executor's own {@link Builder#owner} belong to an earlier incarnation of this instance (or to
   * an execution running in this executor now, which is then waited for): they are resumed first,
   * at once, if the journal lets an owner reclaim its own lease. Those leased by another owner are
   * not touched and are counted in {@link ResumeSummary#leasedElsewhere()}; to wait for their
   * leases to expire and resume them, use {@link #resumePending(Map, Duration)}.
   *
   * <p>The pass counts as a call in progress for {@link #close()}, which waits for it (up to its
   * grace), so that the journal can be closed after close returns; its own threads (with
   * {@link Builder#resumeConcurrency} above 1) are part of it. Once the executor is closed the pass
   * starts no other operation: those being resumed end as a closed {@link #execute} does (an attempt
   * on the wire is recorded; no further attempt or backoff, the operation stays PENDING with its
   * key), claims it made for operations it did not start are given back (PENDING, due, never
   * sent), the outcomes its handlers received are recorded, and it throws
   * {@link IllegalStateException}. A handler that closes the executor is part of the pass: close
   * does not wait for the pass then, and the pass stops the same way after the handler returns.
   *
   * @param handlers handlers by operation name
   * @return what this pass did
   * @throws IllegalStateException if this executor is closed (before the call, or during it: see
   *     above), or reports a background failure (see the class comment)
   * @throws JournalException if the journal cannot be read; outcomes of single operations go to
   *     their handlers instead
   */
  public ResumeSummary resumePending(Map<String, ResumeHandler> handlers) throws IdempotencyException {
    return resumePending(handlers, Duration.ZERO);
  }

  /**
   * {@link #resumePending(Map)}, then, while operations stay leased by another owner, waits with
   * this executor's {@link Sleeper} until the earliest such lease expires (bounded by what is left of
   * {@code waitForLeased}) and resumes again. Useful at startup, when a dead process's leases are
   * still running out. Close wakes the wait: the call then throws {@link IllegalStateException},
   * and the operations still leased elsewhere are left as they are.
   *
   * @param handlers handlers by operation name
   * @param waitForLeased how long to wait, in all, for leases held elsewhere; zero for one pass.
   *     A wait above 100 years (such as {@code ChronoUnit.FOREVER.getDuration()}) is taken as 100
   *     years: as long as leases keep being held elsewhere
   * @return the passes added up; {@code leasedElsewhere} is what is still leased at the end
   * @throws IllegalStateException if this executor is closed (before the call, during a pass or
   *     during the wait; see {@link #resumePending(Map)}), or reports a background failure
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the thread is interrupted while waiting; nothing is lost,
   *     every operation not yet resumed stays in the journal
   * @throws IllegalArgumentException if {@code waitForLeased} is negative
   */
  public ResumeSummary resumePending(Map<String, ResumeHandler> handlers, Duration waitForLeased)
      throws IdempotencyException {
    Objects.requireNonNull(handlers, "handlers");
    Objects.requireNonNull(waitForLeased, "waitForLeased");
    if (waitForLeased.isNegative()) {
      throw new IllegalArgumentException("waitForLeased must not be negative: " + waitForLeased);
    }
    // Counted, as execute (its lanes are part of it): close waits for the pass, which stops at its
    // next operation once closed.
    lifecycle.enterSync("resumePending");
    try {
      return resumePendingCounted(handlers, waitForLeased);
    } finally {
      lifecycle.exitSync();
    }
  }

  private ResumeSummary resumePendingCounted(Map<String, ResumeHandler> handlers, Duration waitForLeased)
      throws IdempotencyException {
    return PendingResumer.resumeWaiting(handlers, waitForLeased, settings, sleeper, lifecycle,
        () -> new PendingResumer(settings, retention, singleFlight, lifecycle, new PendingResumer.Runner() {
          @Override
          public Outcome run(OperationRecord record, Transport transport, Runnable atAgeLimit)
              throws IdempotencyException {
            // Read again by the pass and found due a moment ago (one lane): fenced on that read.
            return runSync(record, record.request(), transport, policy, false, false, true, atAgeLimit);
          }

          @Override
          public Outcome lead(SingleFlight.Ticket ticket, OperationRecord record, Lease claimed, boolean fenced,
              Transport transport, Runnable atAgeLimit) throws IdempotencyException {
            return IdempotentExecutor.this.lead(ticket, record, claimed, fenced, record.request(), transport, policy,
                false, false, false, atAgeLimit);
          }

          @Override
          public OperationRecord expire(OperationRecord record, Runnable atAgeLimit) throws IdempotencyException {
            return expireInFlight(record, atAgeLimit);
          }
        }, resumeConcurrency));
  }

  /**
   * Executes an operation without blocking: attempts run through {@code transport}, and waits are
   * scheduled on the scheduler, so no thread is held during backoff. Begin happens before this
   * method returns; if it fails, the future is already failed and nothing was sent.
   *
   * <p>Cancelling the returned future stops further attempts and leaves the operation PENDING. It
   * returns at once, never waiting for the journal: the executor's pool writes what is left (a
   * claim taken meanwhile is given back; an attempt on the wire is recorded as ambiguous when it
   * ends, unless the transport then fails it with
   * {@link dev.idem.core.spi.RequestNotSentException}, which leaves no attempt recorded; the
   * attempt timeout, if set, still bounds it). Completing the returned future in any other way
   * ({@code orTimeout}, {@code completeOnTimeout}, {@code complete}, {@code completeExceptionally})
   * is the same as cancelling it: the execution stops as below, and what the app put in the future
   * is that caller's alone, never handed to the other calls waiting on the operation (single
   * flight), which get the operation's outcome. If the cancelled execution writes nothing more (it
   * was in a backoff, say), callers already waiting on it (single flight) get an
   * {@link OperationPendingException} at once, and the journal says PENDING too: they send nothing
   * ahead of that backoff or a server's {@code Retry-After}, and the cancel does no journal work for
   * them. A resume pass or an outbox delivery waiting on it is the exception: it had read the
   * operation due and held by no one, so it reads it again and sends it if it still is (on the
   * executor's pool for a delivery, never on the cancelling thread). Otherwise every
   * call for the same operation waiting on it, from before the cancel or made after it (a Reactor
   * {@code retry()} after a {@code timeout()}, say), synchronous or not, waits until that execution
   * has written its last journal record (the claim it was taking given back, the attempt it had on
   * the wire recorded once it ends, or the outcome it was recording as the cancel came), then
   * starts over from the journal with the same key: it gets the outcome the journal recorded, or
   * sends; the key is never sent twice at once from this process, and no attempt is recorded that
   * was not sent. The same holds when the call ends with {@link OperationPendingException} while
   * its attempt is still on the wire (the scheduler refused that attempt's timeout, or the pool
   * refused its hand-over for good): the attempt is recorded as ambiguous when it ends, and calls
   * for the operation wait for that. Such a waiting call cancelled by its own caller before it
   * starts over begins and sends nothing; a cancel that lands while its new start runs (on the
   * thread that ended the wait) reaches the new execution once that start returns, as a cancel
   * right after any call: the start may have sent its first attempt by then (with the same key;
   * recorded when it ends). {@link #close()} ends such a waiting call at once with an {@link OperationPendingException}.
   *
   * <p>An operation the journal holds already, unfinished, is subject to its age limit as in
   * {@link #execute}: not sent, nor retried, at or past it.
   *
   * @param operation the logical operation: its identity (and so its key), request and optional
   *     policy; journaled before this method returns
   * @param transport sends one attempt without blocking; called once per attempt with the same key
   * @return a future of the outcome, failing with the exceptions listed in the class comment
   * @throws IllegalArgumentException at once, if the input cannot be journaled and sent faithfully
   *     (see the class comment)
   */
  public CompletableFuture<Outcome> executeAsync(Operation operation, AsyncTransport transport) {
    Objects.requireNonNull(transport, "transport");
    // Counted while its begin (and first claim) runs on this thread: close waits for that write.
    lifecycle.enterSync("executeAsync");
    try {
      return startAsync(newOperation(operation, false), operation.request(), transport, policyFor(operation));
    } finally {
      lifecycle.exitSync();
    }
  }

  /** {@link #executeAsync} once the operation is made: joins the flight, then begins (see execute). */
  private CompletableFuture<Outcome> startAsync(NewOperation op, RequestSnapshot request, AsyncTransport transport,
      RetryPolicy p) {
    SingleFlight.Ticket ticket = singleFlight.join(op.id());
    try {
      if (ticket.leader()) {
        BeginResult begun = beginLeading(op, ticket);
        return leadAsync(ticket, begun.record(), begun.lease(), false, request, transport, p, true, true,
            begun.created());
      }
      OperationRecord record = begin(op).record();
      if (record.state().isTerminal()) {
        return AsyncDriver.completed(AttemptLoop.settled(settings, retention, record));
      }
    } catch (IdempotencyException e) {
      return CompletableFuture.failedFuture(e);
    }
    return follow(ticket, op.id(), () -> startAsync(op, request, transport, p), false);
  }

  /**
   * A follower's view of the leader's result: its own future (cancelling it cancels nothing else),
   * or, if the flight tells its followers to start over ({@link SingleFlight#notBegun}),
   * {@code again}'s, unless this follower's future was completed meanwhile (cancelled, or completed by
   * the app, say by {@code orTimeout}): its caller gave up, and nothing is begun or sent for it any
   * more (an outbox dispatcher's stop cancels its deliveries this way too). Such an early end that
   * lands while or after {@code again} starts stops the new execution, as a cancel right after any
   * call does.
   *
   * @param afterCancel whether a leader cancelled in its backoff ({@link SingleFlight#cancelledLeader})
   *     makes this follower start over too: for one fenced on its own read (an outbox delivery),
   *     whose new start then runs on the pool, never on the thread that cancelled; told PENDING if
   *     the pool refuses it, as every other follower is
   */
  private CompletableFuture<Outcome> follow(SingleFlight.Ticket ticket, OperationId id,
      Supplier<CompletableFuture<Outcome>> again, boolean afterCancel) {
    CompletableFuture<Outcome> mine = new CompletableFuture<>();
    ticket.result().whenComplete((o, e) -> {
      if (mine.isDone()) {
        return;
      }
      if (afterCancel && SingleFlight.leaderCancelled(e)) {
        try {
          lifecycle.execute(() -> {
            if (!mine.isDone()) {
              Futures.relayStoppingOnEarlyEnd(mine, startOver(id, again));
            }
          }, "restarting a delivery that waited for a cancelled execution of " + id);
        } catch (RuntimeException refused) {
          mine.completeExceptionally(e);
        }
        return;
      }
      if (!SingleFlight.notBegun(e)) {
        if (e != null) {
          mine.completeExceptionally(e);
        } else {
          mine.complete(o);
        }
        return;
      }
      CompletableFuture<Outcome> next = startOver(id, again);
      // Any early end of mine (a cancel, or the app's orTimeout or completeExceptionally) stops next,
      // as it does a leader's caller future (AsyncDriver#caller).
      Futures.relayStoppingOnEarlyEnd(mine, next);
    });
    return mine;
  }

  /**
   * A follower's new start, on whichever thread ended the flight it waited on: counted as a call in
   * progress, so that close waits for its journal work, and refused once closed (nothing journaled
   * or sent).
   */
  private CompletableFuture<Outcome> startOver(OperationId id, Supplier<CompletableFuture<Outcome>> again) {
    try {
      lifecycle.enterSyncLeavingReport("a call that waited for another execution of " + id);
    } catch (IllegalStateException closed) {
      return CompletableFuture.failedFuture(new OperationPendingException("the IdempotentExecutor was closed while"
          + " a call for " + id + " waited for another execution of it. It stays in the journal with its key "
          + id.key() + "; resumePending, resumeAsync or an OutboxDispatcher on a new executor sends it again with"
          + " the same key", closed, id, List.of(), null));
    }
    try {
      return again.get();
    } catch (RuntimeException | Error e) {
      return CompletableFuture.failedFuture(e); // else it would end unseen, and the call never complete
    } finally {
      lifecycle.exitSync();
    }
  }

  /**
   * Journals an operation without sending it: for queued delivery, where a dispatcher sends it
   * later with {@link #resumeAsync}. Returns the record, which may already exist (same key and
   * fingerprint) in any state. The journal records it as queued ({@link
   * dev.idem.core.spi.NewOperation#queued()}): its first claim is durable before anything is sent,
   * and its outcome is owed to a handler until one receives it (see {@link ResumeHandler}).
   *
   * @param operation the logical operation to journal
   * @return the journaled record, new (PENDING) or existing (any state)
   * @throws IllegalArgumentException if the input cannot be journaled and sent faithfully (see the
   *     class comment)
   * @throws IdempotencyKeyReusedException if the key is journaled with another request
   * @throws JournalException if the record could not be made durable
   */
  public OperationRecord enqueue(Operation operation) throws IdempotencyException {
    lifecycle.enterSync("enqueue"); // counted, as execute: close waits for its journal write
    try {
      return begin(newOperation(operation, true)).record();
    } finally {
      lifecycle.exitSync();
    }
  }

  /**
   * Sends a journaled operation again with its stored key and snapshot, on the calling thread;
   * the transport re-applies the secrets kept out of the journal. Like {@link #resumePending}, it
   * leaves an operation that cannot be sent (target unreachable) PENDING, throwing
   * {@link OperationPendingException}, and does not send one that reached its age limit
   * ({@link Builder#maxPendingAge}; see {@link ExpiredPendingAction}).
   *
   * @param id the journaled operation to send again
   * @param transport sends one attempt; it must re-apply the headers kept out of the journal
   * @return the outcome of a SUCCEEDED operation (at once if it had already succeeded)
   * @throws IllegalArgumentException if the journal has no such operation
   * @throws NullPointerException if {@code id} or {@code transport} is null; nothing was sent
   * @throws IdempotencyException as for {@link #execute}
   */
  public Outcome resume(OperationId id, Transport transport) throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(transport, "transport");
    lifecycle.enterMarkedSync("resume"); // counted, as execute
    try {
      OperationRecord record = settings.journal().find(id)
          .orElseThrow(() -> new IllegalArgumentException("no such operation in the journal: " + id));
      // Its age limit is applied in its flight, by runSync's leader (expiredLeading).
      return runSync(record, record.request(), transport, policy, false, true, false, null);
    } finally {
      lifecycle.exitSync();
    }
  }

  /**
   * Sends a journaled operation again with its stored key and snapshot, without blocking; see
   * {@link #resume} and {@link #executeAsync}.
   *
   * @param id the journaled operation to send again
   * @param transport sends one attempt without blocking; it must re-apply the headers kept out of
   *     the journal
   * @return a future of the outcome; it fails with an {@link IllegalArgumentException} if the
   *     journal has no such operation, and otherwise with the exceptions listed in the class
   * comment
   * @throws IllegalStateException at once, if this executor is closed or reports a background
   *     failure (see the class comment); nothing was sent
   * @throws NullPointerException at once, if {@code id} or {@code transport} is null; nothing was sent
   */
  public CompletableFuture<Outcome> resumeAsync(OperationId id, AsyncTransport transport) {
    return resumeAsync(id, transport, null);
  }

  /**
   * @param asRead null for the app's own call, which reports a background failure; for an outbox
   *     dispatcher's delivery ({@link ExecutorAccess}), which leaves it for the app's next call, the
   *     record as the dispatcher read it
   */
  private CompletableFuture<Outcome> resumeAsync(OperationId id, AsyncTransport transport, OperationRecord asRead) {
    boolean appsCall = asRead == null;
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(transport, "transport");
    // Counted while its journal work runs on this thread (an expiry, the first claim): close waits for it.
    if (appsCall) {
      lifecycle.enterSync("resumeAsync");
    } else {
      lifecycle.enterSyncLeavingReport("resumeAsync");
    }
    try {
      return resumeAsyncCounted(id, transport, asRead);
    } finally {
      lifecycle.exitSync();
    }
  }

  private CompletableFuture<Outcome> resumeAsyncCounted(OperationId id, AsyncTransport transport,
      OperationRecord asRead) {
    boolean appsCall = asRead == null;
    OperationRecord r;
    try {
      Optional<OperationRecord> record = settings.journal().find(id);
      if (record.isEmpty()) {
        return CompletableFuture.failedFuture(new IllegalArgumentException("no such operation in the journal: " + id));
      }
      r = record.get();  // its age limit is applied in its flight, by runAsync's leader (expiredLeading)
    } catch (IdempotencyException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (!appsCall && !r.state().isTerminal() && (r.state() != asRead.state() || r.generation() != asRead.generation())
        && !DueRule.isDueFor(r, settings.owner(), settings.clock().instant())) {
      // A delivery of a record read a moment ago (a due page): another instance sent the operation
      // since and journaled it PENDING until its backoff or the server's Retry-After. The journal's
      // claim takes any PENDING operation, so it would go out again at once; it waits for its due
      // time. (Unchanged, it is sent as the dispatcher decided: its own wait on the scheduler
      // outlasts a wall clock stepped back.)
      return CompletableFuture.failedFuture(new OperationPendingException("not due: changed since the due read, it"
          + " is next due at " + r.nextAttemptAt(), null, id, r.attempts(), r.storedResponse().orElse(null)));
    }
    // The app's resumeAsync(id) names its operation; an outbox dispatcher's delivery is a background pass.
    // A delivery's first claim is fenced on the record it read (see leadAsync).
    return runAsync(r, r.request(), transport, policy, false, appsCall, !appsCall);
  }

  /**
   * @param fenced whether the first claim takes the operation only if it is still as {@code record}
   *     (see {@link AttemptLoop#fenceFirstClaimOn}); after waiting for another execution of it here,
   *     which changed it, as the journal then holds it
   */
  private CompletableFuture<Outcome> runAsync(OperationRecord record, RequestSnapshot request,
      AsyncTransport transport, RetryPolicy p, boolean inline, boolean named, boolean fenced) {
    if (record.state().isTerminal()) {
      return AsyncDriver.completed(AttemptLoop.settled(settings, retention, record));
    }
    SingleFlight.Ticket ticket = singleFlight.join(record.id());
    if (!ticket.leader()) {
      // Fenced: after the execution waited for (ended not begun), read again and fenced on that
      // read, as runSync does.
      return follow(ticket, record.id(), () -> {
        if (!fenced) {
          return runAsync(record, request, transport, p, inline, named, false);
        }
        OperationRecord now;
        try {
          now = dueAfterFollowing(record);
        } catch (IdempotencyException | RuntimeException e) {
          return CompletableFuture.failedFuture(e);
        }
        return runAsync(now, now.request(), transport, p, inline, named, true);
      }, fenced);
    }
    OperationRecord current;
    try {
      current = expiredLeading(record, ticket, null);
    } catch (IdempotencyException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return leadAsync(ticket, current, null, fenced, request, transport, p, inline, named, false);
  }

  /**
   * @param fenced as for {@link #lead}
   * @param created as for {@link #lead}: whether this call's begin created the operation
   */
  private CompletableFuture<Outcome> leadAsync(SingleFlight.Ticket ticket, OperationRecord record, Lease claimed,
      boolean fenced, RequestSnapshot request, AsyncTransport transport, RetryPolicy p, boolean inline, boolean named,
      boolean created) {
    if (record.state().isTerminal()) {
      CompletableFuture<Outcome> settled = AsyncDriver.completed(AttemptLoop.settled(settings, retention, record));
      settled.whenComplete((o, e) -> {
        singleFlight.leave(record.id(), ticket);
        if (e != null) {
          ticket.result().completeExceptionally(e);
        } else {
          ticket.result().complete(o);
        }
      });
      return settled;
    }
    CompletableFuture<Outcome> result = new CompletableFuture<>();
    AttemptLoop loop = new AttemptLoop(settings, record, claimed, p, inline, named, created, retention);
    if (claimed == null && fenced) {
      // An outbox delivery (resumeAsyncCounted): the record was read and found due a moment ago.
      // Its first claim takes it only if unchanged since, or another instance that sent it and
      // queued it again until its backoff or Retry-After meanwhile would see it resent at once.
      loop.fenceFirstClaimOn(record);
    }
    AsyncDriver driver = new AsyncDriver(loop, record.id(), request, transport, result, lifecycle);
    result.whenComplete((o, e) -> {
      boolean cancelled = result.isCancelled();
      // The call is over while the execution may still write the journal (a cancel, close, or a call
      // ended PENDING with its attempt still on the wire): the flight is kept until it is quiet. Never
      // so when the driver completed the result with nothing more to write (stoppedEarly() is then
      // false, or it lost a race with close and holding changes nothing for the followers).
      CompletableFuture<Void> quiet = driver.stoppedEarly() ? driver.quietAfterStop() : null;
      boolean hold = quiet != null && !quiet.isDone();
      if (hold && (cancelled || !driver.abandoned())) {
        // Followers from before the cancel (or the PENDING end) wait with the later ones, then start
        // over from the journal: told PENDING now, they could contradict the record still being
        // written (the SUCCEEDED of an answer that came with the cancel), and a call made while the
        // attempt is on the wire gets what it ends with rather than another call's refusal.
        holdFlightUntilQuiet(record.id(), ticket, quiet);
        return;
      }
      if (cancelled) {
        // Quiet, so the journal stays as it is (not final): followers did not cancel anything, tell
        // them what the operation is (a resume pass or delivery reads it again: see cancelledLeader).
        // The flight is left first, as leaveNotBegun does: a follower that starts over, told on
        // this thread, joins a new flight, not this failed one again (a busy loop, or a nesting
        // through a pool that runs work on the submitting thread).
        singleFlight.leave(record.id(), ticket);
        ticket.result().completeExceptionally(SingleFlight.cancelledLeader(record.id(), e));
        return;
      }
      if (e != null) {
        ticket.result().completeExceptionally(e);
      } else {
        ticket.result().complete(o);
      }
      if (hold) {
        holdFlightUntilQuiet(record.id(), ticket, quiet); // closed: its followers are told already
      } else {
        singleFlight.leave(record.id(), ticket);
      }
    });
    driver.start();
    // Not result itself: the app completing the future it gets (orTimeout, say) must end this
    // execution as a cancel does, never hand its own value to the followers (see AsyncDriver#caller).
    return driver.caller();
  }

  /**
   * After a cancel, a close, or a call ended PENDING with its attempt still on the wire (a refused
   * attempt timeout), keeps the operation's flight until the stopped execution writes
   * nothing more ({@code quiet}): until then it holds the lease (a claim in progress, or given back
   * just after; an attempt on the wire, recorded when it ends), and a call for the same operation
   * made meanwhile (a Reactor re-subscription after a timeout, say, or a resume close waits for)
   * would take that lease over as a dead process's (an ambiguous attempt for a request never sent,
   * and the give-back then fenced) or send the key beside the attempt still running. The calls
   * waiting on the flight, from before the cancel or after, then start over from the journal with
   * the same key (on the thread that made it quiet, or on the pool: never on the thread that
   * cancelled, which must return at once); close ends them with {@link OperationPendingException}
   * at once, as it ends the executions in progress, and the flight stays until quiet, so that a
   * call already inside close's wait cannot take the lease over either.
   */
  private void holdFlightUntilQuiet(OperationId id, SingleFlight.Ticket ticket, CompletableFuture<Void> quiet) {
    Runnable endWaiters = () -> ticket.result().completeExceptionally(new OperationPendingException("the"
        + " IdempotentExecutor was closed while a call for " + id + " waited for a stopped execution of it to"
        + " write its last journal record. It stays in the journal with its key " + id.key() + "; resumePending,"
        + " resumeAsync or an OutboxDispatcher on a new executor sends it again with the same key", null, id,
        List.of(), null));
    if (!lifecycle.holdFlight(endWaiters)) {
      endWaiters.run();
    }
    Runnable release = () -> {
      lifecycle.flightReleased(endWaiters);
      singleFlight.leaveNotBegun(id, ticket);
    };
    Thread stopping = Thread.currentThread();
    quiet.whenComplete((v, x) -> {
      if (Thread.currentThread() != stopping) {
        release.run();
        return;
      }
      // Quiet came between the check and now: the waiters' new start (journal work) is not for
      // the cancelling thread.
      try {
        lifecycle.execute(release, "restarting the calls that waited for a stopped execution of " + id);
      } catch (RuntimeException refused) {
        release.run(); // pool full or gone: as AsyncDriver records an attempt, on this thread after all
      }
    });
  }

  /**
   * Re-drives a FAILED or UNCERTAIN operation: it becomes PENDING again with the same key and
   * snapshot, ready for {@link #execute} with the same operation, or for a resume. An operator's
   * action: it re-drives the operation in whichever of the two states it is in now (a delivery
   * recorded for its outcome is cleared, so its next outcome is handed over), unlike
   * {@link #reconcileUncertain}, which re-drives only what is still as it listed it.
   *
   * <p>The age limit of queued delivery ({@link Builder#maxPendingAge}) counts from the re-drive
   * only for an operation no attempt of which may have reached the server (never sent, or only
   * refused connections): the journal records the re-drive as its new {@code createdAt}
   * ({@link Journal#redrive}), so an order that ended FAILED at its age limit through an outage is
   * sent by the next resume. Once an attempt may have reached the server, the age limit keeps
   * counting from the creation: the server's retention of the key may have started at that
   * attempt, and a resend after it forgets the key would not be caught. Re-driving such an
   * operation past its age limit is logged as a WARN naming it: the next resume ends it UNCERTAIN
   * again, unsent (under {@link ExpiredPendingAction#RESEND} it is resent with that key). Reconcile
   * it instead, and if its effect does not exist, send it again as a new operation, with a new key.
   *
   * @param id the operation to re-drive
   * @return the updated, PENDING record
   * @throws IllegalStateException if the operation is in any other state
   * @throws JournalException if the journal cannot be read or written
   * @throws IdempotencyException if the journal fails in any other way
   */
  public OperationRecord redrive(OperationId id) throws IdempotencyException {
    lifecycle.enterSync("redrive"); // counted, as execute: close waits for its journal write
    try {
      OperationRecord redriven = settings.journal().redrive(id, settings.clock().instant());
      retention.warnIfRedriveCannotSend(redriven);
      return redriven;
    } finally {
      lifecycle.exitSync();
    }
  }

  /**
   * One page of operations in {@code state}, ordered by identity: for example the dead letters
   * (FAILED) and the UNCERTAIN ones that need a re-drive or a reconciliation.
   *
   * @param state the state to list
   * @param after the last identity of the previous page, or null for the first
   * @param limit the page size, at least 1
   * @return at most {@code limit} records, ordered by identity; possibly fewer while more follow (a
   *     journal may bound a page by its bytes: see {@link Journal}); empty means there are no more
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
   */
  public List<OperationRecord> list(OperationState state, OperationId after, int limit) throws IdempotencyException {
    return settings.journal().findByState(state, after, limit);
  }

  /**
   * Asks {@code reconciler} about every UNCERTAIN operation and settles those it can: an
   * operation found to have succeeded becomes SUCCEEDED with the proof as its response; one found
   * not to have happened becomes FAILED. Nothing is sent for either: the journal settles each in
   * one conditional write ({@link Journal#settleIfUnchanged}), from UNCERTAIN straight to the state
   * found, so a resume running meanwhile (in this executor, another one, or another instance on
   * the journal), or a restart after a crash in the middle of the pass, never finds it due and
   * sends it again. That matters most for a success found long after the attempt: past the
   * server's key retention, a resend would be a second effect. (A journal that keeps that method's
   * default, written before it, settles in three writes, and does not give this guarantee.) A
   * settled operation's outcome is owed to its resume handler if it was queued, as after any
   * finish; except in one race: settled while a resume is handing that handler the UNCERTAIN
   * outcome, the resume's record of that delivery, which names no generation, marks the settled
   * outcome delivered too, and the handler hears of the settlement only by looking the operation
   * up ({@link #find}). Operations the reconciler cannot settle, or cannot ask about (it throws),
   * stay UNCERTAIN.
   *
   * <p>Passes may overlap: on other threads, in other executors, or in other instances that share
   * the journal. An operation is settled only if it is still as the pass listed it (UNCERTAIN, at
   * the same generation), so one that another pass or an operator settled or re-drove while its
   * reconciler was asked is passed over, with an INFO log line, nothing written and not counted: it
   * is never settled, nor its outcome handed to a resume handler, twice. The same holds for one
   * purged meanwhile.
   *
   * @param reconciler asks the server (or another source of truth) what became of an operation
   * @return how many operations were settled
   * @throws IllegalStateException if this executor is closed (before the call, or during it: the
   *     pass then stops before writing for its next operation, and those not settled stay UNCERTAIN),
   *     or reports a background failure (see the class comment)
   * @throws JournalException if the journal cannot be read or written
   * @throws IdempotencyException if the journal fails in any other way
   */
  public int reconcileUncertain(Reconciler reconciler) throws IdempotencyException {
    Objects.requireNonNull(reconciler, "reconciler");
    lifecycle.enterSync("reconcileUncertain"); // counted, as execute; it stops at the next operation once closed
    try {
      return new UncertainReconciler(settings, lifecycle::isClosed).reconcile(reconciler);
    } finally {
      lifecycle.exitSync();
    }
  }

  /**
   * Looks an operation up by identity.
   *
   * @param id the operation's identity
   * @return its record, or empty if the journal holds none (never journaled, or purged)
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
   */
  public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
    return settings.journal().find(id);
  }

  /**
   * Looks operations up by the app's own reference, oldest first.
   *
   * @param scope the scope the operations were begun in
   * @param reference the app's own reference, as given to {@link Operation.Builder#reference}
   * @return the matching records, oldest first; empty if there are none
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
   */
  public List<OperationRecord> findByReference(String scope, String reference) throws IdempotencyException {
    return settings.journal().findByReference(scope, reference);
  }

  /**
   * The default retry policy, which operations without a policy of their own and resumes use.
   *
   * @return the policy given to {@link Builder#retryPolicy}, or {@link RetryPolicy#ofDefaults()}
   */
  public RetryPolicy retryPolicy() {
    return policy;
  }

  /**
   * The owner name this executor writes into its leases ({@link Builder#owner}). An outbox
   * dispatcher on this executor takes back, at once, the operations still leased under this name
   * by an earlier incarnation (see {@link Journal#findDue(java.time.Instant, String, OperationRecord, int)}).
   *
   * @return the owner name given to the builder, or the default {@code idem-<pid>-<random>}
   */
  public String owner() {
    return settings.owner();
  }

  /**
   * How long a claim of this executor lasts ({@link Builder#leaseFor}); an outbox dispatcher on it
   * sends no attempt that waited for a worker for half of it or more.
   *
   * @return the lease duration given to the builder, default 2 minutes
   */
  public Duration leaseFor() {
    return settings.leaseFor();
  }

  /**
   * The journal this executor writes to.
   *
   * @return the journal given to the builder, or the {@link InMemoryJournal} it made by default
   */
  public Journal journal() {
    return settings.journal();
  }

  /**
   * The classifier this executor judges each attempt with, so that an adapter that must judge an
   * answer the executor never sees (the first answer of an attempt whose follow-up the adapter
   * refused) judges it as the app configured, not by the default table.
   *
   * @return the classifier given to {@link Builder#classifier}, {@link Classifier#defaults()} by
   *     default; its thread-safety is the app's classifier's
   */
  public Classifier classifier() {
    return settings.classifier();
  }

  /**
   * {@return which responses this executor takes as the protocol's key-reused, key-missing and
   * in-flight answers (for adapters that map them to their own API)}
   */
  public ProtocolStatuses protocol() {
    return settings.protocol();
  }

  /**
   * The response header this executor reads as the server's replay marker, so that adapters judge
   * the responses they hand back by the same header.
   *
   * @return the header name given to {@link Builder#replayHeader}, {@code Idempotent-Replayed} by default
   */
  public String replayHeader() {
    return replayHeader;
  }

  /**
   * Closes this executor: refuses later calls, ends the asynchronous executions in progress with
   * {@link OperationPendingException} (their operations stay in the journal with their keys), and
   * shuts down the scheduler and pool it made itself, waiting up to 10 seconds for journal work
   * already running and for the calls in progress on other threads that write the journal there
   * ({@code execute}, {@code resume}, {@code enqueue}, {@code redrive}, {@code reconcileUncertain},
   * {@code resumePending} with the threads of its own that {@link Builder#resumeConcurrency} gives
   * it, and the start of {@code executeAsync} and {@code resumeAsync}; an attempt on the wire runs
   * to its end and is recorded, and a backoff or a {@code resumePending} wait for leases held
   * elsewhere is woken), so that the journal can be closed as soon as this returns. A close made
   * from inside such a call (its transport, its reconciler, a resume handler, on whichever of the
   * call's threads) does not wait for that call. What exactly happens is listed in the class
   * comment under "Threads and lifecycle". A journal, scheduler or async executor given to the
   * {@link Builder} is the app's: it is neither closed nor shut down. Idempotent, and safe to call from any thread, but not from
   * the executor's own threads (a listener or a transport callback), which close waits for.
   */
  @Override
  public void close() {
    lifecycle.close();
  }

  /**
   * Whether {@link #close()} was called.
   *
   * @return true once closed; every call that would journal or send then throws
   *     {@link IllegalStateException}
   */
  public boolean isClosed() {
    return lifecycle.isClosed();
  }

  private RetryPolicy policyFor(Operation operation) {
    return operation.policy().orElse(policy);
  }

  /**
   * The operation as the journal records it. Refused here, before the journal sees it, if it
   * cannot be journaled and sent faithfully: what is journaled is sent again, possibly after a
   * restart.
   *
   * @param queued journaled for a deliverer to send later, not sent by this call
   */
  private NewOperation newOperation(Operation requested, boolean queued) {
    Operation operation = withKey(requested);
    InputChecks.check(operation);
    secrets.checkUri(operation.request().uri(), operation.id().operation());
    // Every operation, whatever its name: an adapter passes an untagged call with such a body
    // through unjournaled before keying it (AdapterSupport.passesUntaggedUnjournaled).
    secrets.checkFormBody(operation.request(), operation.id().operation());
    RequestSnapshot persisted = secrets.persistable(operation.request());
    return new NewOperation(operation.id(), operation.reference().orElse(null),
        fingerprinter.fingerprint(persisted), persisted, settings.clock().instant(), queued);
  }

  private BeginResult begin(NewOperation op) throws IdempotencyException {
    return begin(op, false);
  }

  /**
   * The leader's begin, which claims the operation it creates: one durable write. If it fails,
   * nothing was journaled or sent for this caller, and the flight's followers start over.
   */
  private BeginResult beginLeading(NewOperation op, SingleFlight.Ticket ticket) throws IdempotencyException {
    try {
      BeginResult begun = begin(op, true);
      return begun.created() ? begun : new BeginResult(expiredOrAsIs(begun.record(), null), false, null);
    } catch (IdempotencyException | RuntimeException | Error e) {
      singleFlight.leaveNotBegun(op.id(), ticket);
      throw e;
    }
  }

  /**
   * An operation an inline call found journaled already, ended first if it reached its age limit,
   * as {@link #resume} would end it: a record days old may have an attempt that took effect, and
   * once the server has forgotten its key a resend could run it twice, so "executing the same
   * Operation again" sends nothing then either ({@link KeyRetention#expireIfDue}: FAILED if no
   * attempt can have reached the server, else UNCERTAIN; never under
   * {@link ExpiredPendingAction#RESEND}).
   *
   * @param atAgeLimit run if this call ends the operation at its age limit; null if no one asks
   * @return the record as the journal holds it after the expiry, or after an expiry that did not
   *     end it after all (re-driven since {@code record} was read, or held by another owner); or
   *     {@code record} if the age limit did not apply to it
   */
  private OperationRecord expiredOrAsIs(OperationRecord record, Runnable atAgeLimit) throws IdempotencyException {
    if (record.state().isTerminal() || !retention.endsAtAgeLimit(record)) {
      return record;
    }
    if (retention.expireIfDue(record).isTerminal() && atAgeLimit != null) {
      atAgeLimit.run();
    }
    // Read again whether it ended or not: one re-driven since it was read is sent, and an
    // execution given the stale record would count its age limit from the old creation.
    return settings.journal().find(record.id()).orElse(record);
  }

  /**
   * {@link #expiredOrAsIs} for the leader of {@code record}'s flight (resume, resumeAsync, an
   * outbox delivery, a resume pass): the age limit is applied inside the single flight, as every
   * claim this executor makes is. Outside it, the expiry's claim (an owner may re-claim its own
   * lease) took over the live lease of an execution of the same operation running in this
   * executor (an inline call, or another expiry), recording a phantom "the holder stopped"
   * attempt and failing that execution on a stale lease. If it fails, the flight ends not begun:
   * its followers start over.
   */
  private OperationRecord expiredLeading(OperationRecord record, SingleFlight.Ticket ticket, Runnable atAgeLimit)
      throws IdempotencyException {
    try {
      return expiredOrAsIs(record, atAgeLimit);
    } catch (IdempotencyException | RuntimeException | Error e) {
      singleFlight.leaveNotBegun(record.id(), ticket);
      throw e;
    }
  }

  /**
   * Ends {@code record} at its age limit for a resume pass that sends it no attempt, inside its
   * single flight (see {@link #expiredLeading}): an execution of it running in this executor (an
   * inline call whose attempt outlived the limit) is waited for, and the record is read again
   * after it. The flight ends not begun, so callers that waited start over from the journal.
   *
   * @param atAgeLimit run if this call ends the operation at its age limit, not if the execution it
   *     waited for ended it (sent and refused, say)
   * @return the record as the journal then holds it: ended, finished by the execution waited for,
   *     or as it was if the age limit does not apply
   */
  private OperationRecord expireInFlight(OperationRecord record, Runnable atAgeLimit) throws IdempotencyException {
    OperationRecord current = record;
    while (!current.state().isTerminal()) {
      SingleFlight.Ticket ticket = singleFlight.join(current.id());
      if (ticket.leader()) {
        try {
          return expiredOrAsIs(current, atAgeLimit);
        } finally {
          singleFlight.leaveNotBegun(current.id(), ticket);
        }
      }
      try {
        SyncDriver.awaitLeader(current.id(), ticket.result(), lifecycle);
      } catch (IdempotencyException | CompletionException e) {
        if (!ticket.result().isDone()) {
          throw e;  // this call was cancelled or interrupted while it waited, not the execution's end
        }
      }
      current = settings.journal().find(current.id()).orElse(current);
    }
    return current;
  }

  /** @param claim claim the operation if this call creates it ({@link Journal#beginAndClaim}) */
  private BeginResult begin(NewOperation op, boolean claim) throws IdempotencyException {
    BeginResult begun;
    try {
      begun = claim ? settings.journal().beginAndClaim(op, settings.owner(), settings.leaseFor())
          : settings.journal().begin(op);
    } catch (IdempotencyKeyReusedException e) {
      settings.emit(new IdemEvent.KeyMismatch(op.id(), false));
      throw e;
    }
    if (begun.created() && settings.listening()) {
      settings.emit(new IdemEvent.OperationStarted(op.id()));
    }
    return begun;
  }

  /** The operation with its key derived from its reference, if it asks for that. */
  private Operation withKey(Operation operation) {
    if (!operation.keyFromReference()) {
      return operation;
    }
    if (referenceKeySecret == null) {
      throw new IllegalStateException("operation '" + operation.name() + "' derives its key from its reference,"
          + " but this executor has no secret to derive it with: set IdempotentExecutor.Builder.referenceKeySecret;"
          + " nothing was journaled or sent");
    }
    return operation.withDerivedKey(referenceKeySecret);
  }

  /** Builds an {@link IdempotentExecutor}. Not thread-safe. */
  public static final class Builder {
    /** The journals' owner column: VARCHAR(200) on PostgreSQL and H2, a length check on SQLite. */
    private static final int MAX_OWNER = 200;

    private Journal journal;
    private RetryPolicy policy = RetryPolicy.ofDefaults();
    private Classifier classifier = Classifier.defaults();
    private Fingerprinter fingerprinter = Fingerprinter.defaults();
    private Clock clock = Clock.systemUTC();
    private Sleeper sleeper = Sleeper.system();
    private Scheduler scheduler;
    private DoubleSupplier random = () -> ThreadLocalRandom.current().nextDouble();
    private String owner = "idem-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
    private Duration leaseFor = Duration.ofMinutes(2);
    private int resumeConcurrency = 1;
    private String replayHeader = ProtocolHeaders.REPLAYED;
    private final Set<String> secretHeaders = new HashSet<>();
    private final Set<String> allowedHeaders = new HashSet<>();
    private final Set<String> allowedQueryParameters = new HashSet<>();
    private Duration serverKeyRetention = Duration.ofHours(24);
    private Duration maxPendingAge;
    private ExpiredPendingAction expiredPendingAction = ExpiredPendingAction.MARK_UNCERTAIN;
    private IdemListener listener = IdemListener.none();
    private CircuitBreakerSettings breakerSettings = CircuitBreakerSettings.ofDefaults();
    private RetryBudget retryBudget;
    private ProtocolStatuses protocol = ProtocolStatuses.ietfDraft();
    private byte[] referenceKeySecret;
    private Executor asyncExecutor;

    private Builder() {}

    /**
     * The secret that derives the keys of operations made from a business reference
     * ({@link Operation#forReference}): HMAC-SHA256 over the scope, the operation name and the
     * reference. Give every instance that may submit the same references the same secret, and keep
     * it as you keep other credentials: whoever has it can compute the keys. It is copied, and never
     * journaled, logged or shown. Default: none, and then beginning such an operation throws
     * {@link IllegalStateException} before anything is journaled or sent.
     *
     * @param secret at least 16 bytes (32 random bytes recommended)
     * @return this builder
     * @throws IllegalArgumentException if shorter than 16 bytes
     */
    public Builder referenceKeySecret(byte[] secret) {
      Objects.requireNonNull(secret, "secret");
      if (secret.length < 16) {
        throw new IllegalArgumentException("referenceKeySecret must have at least 16 bytes; it has " + secret.length);
      }
      this.referenceKeySecret = secret.clone();
      return this;
    }

    /**
     * Where {@link IdempotentExecutor#executeAsync} and {@link IdempotentExecutor#resumeAsync} do
     * their journal work (claim, record the attempt, decide, schedule the next): after every
     * backoff and attempt timeout (the scheduler's thread only hands the work over), and when an
     * attempt completes on a thread other than the one that sent it, typically the HTTP client's
     * callback or completion thread, which is then released at once instead of waiting for the
     * journal. Default: a pool owned by this executor, made on first use and shut down by
     * {@link IdempotentExecutor#close()}: daemon threads {@code idem-async-N-M}, as many as
     * processors (at least 2), idle ones ending after 30 s, and a queue of 1024 tasks. When that
     * queue is full, a completing client thread does the work itself (slowing the client down
     * rather than queueing without bound), and a timer tries again 10 ms later.
     *
     * @param executor runs that work; the app keeps it and shuts it down (after closing the
     *     executor), {@code close()} never does. It must not drop tasks silently, and it should
     *     refuse (throw {@link java.util.concurrent.RejectedExecutionException}) rather than run a
     *     task on the submitting thread: a timer's work would then run on the scheduler's thread
     * @return this builder
     */
    public Builder asyncExecutor(Executor executor) {
      this.asyncExecutor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * Which statuses (and bodies) the target servers use for key reused, key missing and key in
     * flight; default {@link ProtocolStatuses#ietfDraft()} (422, 400, 409). See the presets on
     * {@link ProtocolStatuses} for servers that answer 417 or 409 to a reused key.
     *
     * @param protocol the protocol statuses
     * @return this builder
     */
    public Builder protocol(ProtocolStatuses protocol) {
      this.protocol = Objects.requireNonNull(protocol, "protocol");
      return this;
    }

    /**
     * Receives every {@link IdemEvent}; default none. Combine several with {@link
     * IdemListener#all}.
     *
     * @param listener the listener; called on the threads that run attempts, so it must be
     *     thread-safe and quick
     * @return this builder
     */
    public Builder listener(IdemListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * The per-host circuit breaker; default {@link CircuitBreakerSettings#ofDefaults()}, or
     * {@link CircuitBreakerSettings#disabled()}.
     *
     * @param settings the breaker settings, shared by every host this executor sends to
     * @return this builder
     */
    public Builder circuitBreaker(CircuitBreakerSettings settings) {
      this.breakerSettings = Objects.requireNonNull(settings, "settings");
      return this;
    }

    /**
     * The per-host retry budget; default {@link RetryBudget#tokenBucket(Clock)} on this builder's
     * clock (500 tokens, 5 per retry, 1 back per success, 1 per second), or
     * {@link RetryBudget#unlimited()}.
     *
     * @param budget the budget; it must be thread-safe if the executor is shared across threads
     * @return this builder
     */
    public Builder retryBudget(RetryBudget budget) {
      this.retryBudget = Objects.requireNonNull(budget, "budget");
      return this;
    }

    /**
     * How long the server remembers a key; default 24 hours (Stripe's documented minimum). Queued
     * delivery stops sending an operation before this, at {@link #maxPendingAge}.
     *
     * @param retention how long the target servers keep a key, positive
     * @return this builder
     * @throws IllegalArgumentException if {@code retention} is zero, negative or above 100 years
     */
    public Builder serverKeyRetention(Duration retention) {
      this.serverKeyRetention = Checks.positive(retention, "serverKeyRetention");
      return this;
    }

    /**
     * The age limit of queued delivery: how long after its creation an operation may still be sent
     * by a resume ({@link IdempotentExecutor#resumePending}, {@code resume}, {@code resumeAsync})
     * or an {@code OutboxDispatcher}. Until then an operation that cannot be sent (the target
     * refuses connections, its name does not resolve, the breaker is open, the budget is empty)
     * stays PENDING with its key, however long the outage. At the limit it is not sent again and
     * ends: FAILED if no attempt can have reached the server (one never sent can honestly fail),
     * UNCERTAIN if one may have. Inline calls ({@code execute}, {@code executeAsync}) are bounded
     * by their retry policy instead. Does not apply under {@link ExpiredPendingAction#RESEND}.
     *
     * <p>Why below {@link #serverKeyRetention}: once the server forgets a key, a resend of an
     * operation that may already have taken effect runs it a second time. The age counts from
     * creation on this client's clock, while the server counts from when it first saw the key on
     * its own clock, and the last attempts started before the limit may still be on their way; the
     * margin absorbs clock skew and those attempts.
     *
     * <p>Default: three quarters of {@link #serverKeyRetention}, so 18 hours under the default
     * 24-hour retention.
     *
     * @param age the age limit, positive and not above serverKeyRetention (checked by
     *     {@link #build()}, so the two may be set in either order)
     * @return this builder
     * @throws IllegalArgumentException if {@code age} is zero, negative or above 100 years
     */
    public Builder maxPendingAge(Duration age) {
      this.maxPendingAge = Checks.positive(age, "maxPendingAge");
      return this;
    }

    private Duration maxPendingAgeOrDefault() {
      return maxPendingAge != null ? maxPendingAge : serverKeyRetention.multipliedBy(3).dividedBy(4);
    }

    /**
     * What queued delivery does with an operation that reaches its age limit
     * ({@link #maxPendingAge}); default MARK_UNCERTAIN, which ends it without sending it again.
     *
     * @param action the action to take
     * @return this builder
     */
    public Builder expiredPendingAction(ExpiredPendingAction action) {
      this.expiredPendingAction = Objects.requireNonNull(action, "action");
      return this;
    }

    /**
     * The journal; default a new {@link InMemoryJournal}: keys do not survive a restart, and it keeps
     * at most {@value InMemoryJournal#DEFAULT_MAX_FINISHED_BYTES} bytes (16 MiB, estimated) of finished
     * operations, dropping the first finished past that.
     *
     * @param journal the journal; the app owns it and closes it, after closing the executor (the
     *     executor never closes it)
     * @return this builder
     */
    public Builder journal(Journal journal) {
      this.journal = Objects.requireNonNull(journal, "journal");
      return this;
    }

    /**
     * The default retry policy; default {@link RetryPolicy#ofDefaults()}. An operation's own
     * policy, if it has one, wins.
     *
     * @param policy the policy used by operations without their own, and by resumes
     * @return this builder
     */
    public Builder retryPolicy(RetryPolicy policy) {
      this.policy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * The classifier; default {@link Classifier#defaults()}.
     *
     * @param classifier decides whether each attempt's result or failure is success, retryable,
     *     ambiguous or permanent; must be thread-safe
     * @return this builder
     */
    public Builder classifier(Classifier classifier) {
      this.classifier = Objects.requireNonNull(classifier, "classifier");
      return this;
    }

    /**
     * The fingerprinter; default {@link Fingerprinter#defaults()}.
     *
     * @param fingerprinter computes the request fingerprint that tells a retry from a key reused
     *     for another request; must be thread-safe
     * @return this builder
     */
    public Builder fingerprinter(Fingerprinter fingerprinter) {
      this.fingerprinter = Objects.requireNonNull(fingerprinter, "fingerprinter");
      return this;
    }

    /**
     * The clock; default {@link Clock#systemUTC()}.
     *
     * @param clock the clock for journal timestamps, leases, retention and the retry budget
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * How synchronous execution waits; default {@link Sleeper#system()}.
     *
     * @param sleeper waits between attempts of {@link IdempotentExecutor#execute} and resumes
     * @return this builder
     */
    public Builder sleeper(Sleeper sleeper) {
      this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
      return this;
    }

    /**
     * Runs the executor's timers: the backoff between attempts of
     * {@link IdempotentExecutor#executeAsync} and {@link IdempotentExecutor#resumeAsync}, and the
     * attempt timeout ({@link RetryPolicy#attemptTimeout()}) of every call. Its tasks never call the
     * journal: they hand the work to the {@link #asyncExecutor}, or (a synchronous call's attempt
     * timeout) interrupt the sending thread. Default: a scheduler owned by this executor, one daemon
     * thread {@code idem-scheduler-N-1} started on first use and stopped by
     * {@link IdempotentExecutor#close()}.
     *
     * @param scheduler the scheduler; the app keeps it and shuts it down (after closing the
     *     executor), {@code close()} never does. Tests pass a manual one on fake time
     * @return this builder
     */
    public Builder scheduler(Scheduler scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Uniform values in [0, 1) for jitter; default {@link ThreadLocalRandom}. Must be thread-safe
     * if the executor is shared across threads. It is asked when a retry's delay is chosen, after
     * the attempt was answered; a value outside [0, 1) (an {@link IllegalArgumentException} then)
     * or an exception of its own leaves the operation PENDING with that attempt recorded, and the
     * call throws {@link OperationPendingException} with the exception as its cause.
     *
     * @param random the source of uniform values in [0, 1)
     * @return this builder
     */
    public Builder random(DoubleSupplier random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /**
     * The owner name written into leases; default {@code idem-<pid>-<random>}, new on every start.
     * Set a stable name that is unique among live instances (a pod name, say) so that an instance
     * restarted under the same name reclaims its own leases at once, instead of waiting for them to
     * expire, on a journal that allows it (see {@link Journal#claim}; an {@link InMemoryJournal}
     * never outlives its process, so it has nothing to reclaim). Either way, a dead holder's
     * attempt is counted as ambiguous and the operation is sent again with the same key. Two live
     * instances must never share a name. The name is stored in every lease as given, so it must be
     * one every journal stores unchanged: at most 200 characters (the owner column's length; a
     * Kubernetes pod name may be longer), no control characters (NUL included), no unpaired UTF-16
     * surrogates.
     *
     * @param owner the owner name: not blank, at most 200 characters, no control characters or
     *     unpaired surrogates
     * @return this builder
     * @throws IllegalArgumentException if blank, longer than 200 characters, or holding a control
     *     character or an unpaired surrogate; the message says which, without the name itself
     */
    public Builder owner(String owner) {
      Objects.requireNonNull(owner, "owner");
      if (owner.isBlank()) {
        throw new IllegalArgumentException("owner must not be blank");
      }
      // Refused here, at startup, rather than by the database at every claim: the journals' owner
      // column holds 200 characters.
      if (owner.length() > MAX_OWNER) {
        throw new IllegalArgumentException("owner has " + owner.length() + " characters; at most " + MAX_OWNER
            + " are allowed, the length of the journal's owner column");
      }
      InputChecks.text(owner, "owner");
      this.owner = owner;
      return this;
    }

    /**
     * How long a claim lasts before another process may take the operation over; default 2
     * minutes. Keep it longer than the longest single attempt (for an
     * {@link dev.idem.core.outbox.OutboxDispatcher}'s synchronous transports, twice the longest
     * attempt: one that waited half the lease for a worker is not sent).
     *
     * @param leaseFor the lease duration, positive
     * @return this builder
     * @throws IllegalArgumentException if {@code leaseFor} is zero, negative or above 100 years
     */
    public Builder leaseFor(Duration leaseFor) {
      this.leaseFor = Checks.positive(leaseFor, "leaseFor");
      return this;
    }

    /**
     * How many operations {@link IdempotentExecutor#resumePending} re-sends at once; default 1 (one
     * after another, every {@link ResumeHandler} callback on the calling thread). Above 1, each
     * pass runs a pool of this many threads of its own, stopped when the pass returns, and hands
     * each the next operation as soon as one is free (at most one page of 100 is read ahead); the
     * handlers are then called from those threads, one call at a time, and the transports they
     * return are used concurrently. Worth it on a shared database (PostgreSQL), where each resumed
     * operation waits for several round trips, after a crash, and for operations queued with
     * {@link IdempotentExecutor#enqueue}: every operation the crash left in flight, and every
     * queued operation's first claim, is a durable write (the journal must know before the send
     * that it may leave), and concurrent resumes share the durable journal's group commits where
     * one after another each pays a disk sync. Above 1 the operations are also claimed this many at
     * a time, in one journal write ({@link Journal#claimAll}; one disk sync per batch on the
     * embedded journal). The trade-off: a crash leaves up to two and a half times this many
     * operations claimed and not yet sent (a batch and a half waiting, one per lane), and a restart treats them as every claimed operation, as maybe sent (an
     * ambiguous attempt, resent with the same key; refused with a 4xx, or at its age limit, such an
     * operation ends UNCERTAIN, not FAILED). A pass that stops without a crash gives back the
     * claims it did not use. Otherwise, on an embedded journal, a resumed
     * operation's writes are deferred, and on a machine with few cores the extra threads measured
     * slower (docs/journal.md, docs/fleet.md).
     *
     * @param threads 1 to 256
     * @return this builder
     * @throws IllegalArgumentException if {@code threads} is out of range
     */
    public Builder resumeConcurrency(int threads) {
      if (threads < 1 || threads > 256) {
        throw new IllegalArgumentException("resumeConcurrency must be 1 to 256: " + threads);
      }
      this.resumeConcurrency = threads;
      return this;
    }

    /**
     * The response header that marks a server-side replay; default {@code Idempotent-Replayed}.
     *
     * @param replayHeader the header name, any case
     * @return this builder
     */
    public Builder replayHeader(String replayHeader) {
      this.replayHeader = Objects.requireNonNull(replayHeader, "replayHeader");
      return this;
    }

    /**
     * More headers to keep out of the journal (case-insensitive), in addition to the default rule
     * ({@link RequestSnapshot#isSecretByDefault(String)}: Authorization, Proxy-Authorization, DPoP,
     * Cookie, Set-Cookie, any name containing api-key, apikey, token, secret, password, session,
     * signature, auth or credential, and any name that is key or ends in -key, such as
     * Ocp-Apim-Subscription-Key; {@code Idempotency-Key} and {@code X-Idempotency-Key} are exempt). A
     * header kept out is still
     * sent on live attempts; on a resume after a restart the app's transport (its interceptors or a
     * header supplier) must re-apply it. Adding wins over {@link #allowHeaders}. The same names are
     * left out of the response the journal keeps: the caller gets the response whole, but an
     * outcome read back from the journal (a repeated call, a resume, after a restart) lacks them.
     *
     * @param names header names, any case
     * @return this builder
     */
    public Builder secretHeaders(Set<String> names) {
      names.forEach(n -> secretHeaders.add(n.toLowerCase(Locale.ROOT)));
      return this;
    }

    /**
     * Opts headers out of the default secret rule, so that they are journaled in clear and sent
     * again as stored on a resume: for a header such as {@code X-Session-Id} that the rule matches
     * but that the app knows holds no credential. Default: none. Authorization, Proxy-Authorization,
     * DPoP, Cookie and Set-Cookie cannot be allowed: naming them here is ignored with a warning at
     * {@link #build}, and they stay out of every journal, the in-memory one included.
     *
     * @param names header names, any case
     * @return this builder
     */
    public Builder allowHeaders(Set<String> names) {
      names.forEach(n -> allowedHeaders.add(n.toLowerCase(Locale.ROOT)));
      return this;
    }

    /**
     * Allows query parameters whose names the secret rule matches
     * ({@link RequestSnapshot#isSecretQueryParameterByDefault(String)}: {@code api_key},
     * {@code access_token}, {@code sessionId}, {@code sig}, {@code key}...) to be journaled in clear
     * as part of the URI; path parameters that
     * {@link RequestSnapshot#isSecretPathParameterByDefault(String)} names ({@code ;jsessionid=},
     * exact names only, so matrix parameters such as {@code ;author=} need no allow); and a query
     * parameter whose value is a URL carrying a credential ({@code ?next=https://user:pw@host/}, or a
     * parameter {@link RequestSnapshot#isSecretNestedQueryParameterByDefault(String)} names),
     * which is then journaled whole without being read. Without this, {@code execute},
     * {@code executeAsync} and {@code enqueue} refuse such a request with an
     * {@link IllegalArgumentException} that names the parameter (never its value), before anything
     * is journaled or sent: the URI is the request's identity, journaled whole, and the journaled
     * URI is what a resume sends, so Idem does not rewrite it. Better: move the credential to a
     * header the app's transport adds on every attempt. In a stored {@code Location}, an allowed
     * name is kept in clear too. The rule also reads a parameter behind an {@code &amp;} copied
     * from HTML ({@code ?sv=1&amp;sig=...} as {@code sig}) and one after a {@code ;} that servers
     * splitting on it read ({@code ?a=1;access_token=...} as {@code access_token}); allow the name
     * the refusal gives. Names match as the rule matches them, ignoring case: allowing
     * {@code sig} also allows {@code SIG} and {@code Sig}, which the rule refuses alike. Default:
     * none.
     *
     * @param names query or path parameter names as they appear decoded in the URI, any case
     * @return this builder
     */
    public Builder allowQueryParameters(Set<String> names) {
      allowedQueryParameters.addAll(names);
      return this;
    }

    /**
     * Builds the executor; without a journal set, it makes a new {@link InMemoryJournal}.
     *
     * @return a new, thread-safe executor
     * @throws IllegalArgumentException if {@link #maxPendingAge} is above {@link #serverKeyRetention}
     */
    public IdempotentExecutor build() {
      if (maxPendingAge != null && maxPendingAge.compareTo(serverKeyRetention) > 0) {
        throw new IllegalArgumentException("maxPendingAge (" + maxPendingAge + ") must not be above"
            + " serverKeyRetention (" + serverKeyRetention + "): after the server forgets a key, a resend of an"
            + " operation that may have taken effect can run it twice");
      }
      if (journal == null) {
        journal = new InMemoryJournal();
      }
      return new IdempotentExecutor(this);
    }
  }
}
