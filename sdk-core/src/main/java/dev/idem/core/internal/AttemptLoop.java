package dev.idem.core.internal;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.spi.Lease;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.ProtocolStatuses;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.RetryDecision;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.Transition;
import dev.idem.core.Verdict;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The decision engine of one execution of one operation. It claims, records, classifies, decides
 * and writes every state change to the journal; it never sends or waits itself. A driver calls
 * {@link #start()}, performs the {@link Step} it gets, and reports back with
 * {@link #onResponse}, {@link #onFailure} or {@link #afterWait()}. Those four entry points are
 * also where an exception from the app's own code is caught, once for both drivers (see
 * {@link #appCodeThrew}); the journal's own failures pass through them unchanged.
 *
 * <p>Not thread-safe: one driver uses it at a time (the async driver hands it from one callback to
 * the next, which the futures order).
 */
public final class AttemptLoop {
  private static final Logger LOG = LoggerFactory.getLogger(AttemptLoop.class);

  private final EngineSettings s;
  private final OperationId id;
  private final RetryPolicy policy;
  private final List<AttemptRecord> history;
  private final String host;
  private final Instant createdAt;
  private final boolean inline;
  /** Whether the app's call named this operation: its claims may wait briefly ({@link Claims#claim}). */
  private final boolean named;
  /**
   * From this instant the operation is not sent again (see {@link KeyRetention}): for queued
   * delivery, and for an inline call that found its operation journaled already; null for an inline
   * call that created it (its deadline bounds it), or when there is no age limit.
   */
  private final Instant ageLimit;
  /** The age limit, for the advice given with an operation found finished. */
  private final KeyRetention retention;
  /**
   * Queued delivery of an operation whose last attempt, before this execution, was certainly not
   * sent: the target was unreachable when it was last tried, so this execution is a probe, and one
   * more unsent attempt puts it back at once instead of spending a whole round of retries.
   */
  private final boolean probing;
  /** The claim the journal made with the begin, until {@link #start()} sends under it; then null. */
  private Lease claimedAtBegin;
  /** The record the first claim must find unchanged, or null: see {@link #fenceFirstClaimOn}. */
  private OperationRecord fenceFirstClaim;
  /** Read IN_FLIGHT: the first claim takes over a holder's lease, and the journal may add its attempt. */
  private boolean takingOver;
  /** Whether the attempt in progress was charged to the host's retry budget. */
  private boolean chargedAsRetry;
  /** Whether this execution ended the operation at its age limit ({@link #endAtAgeLimit}). */
  private boolean endedAtAgeLimit;

  private Lease lease;
  /** The attempt {@link #record} ended, until {@link #journalTransition} writes it with its transition. */
  private AttemptRecord unjournaled;
  private long generationSeen;
  private Instant runStart;
  private Instant attemptStart;
  /**
   * Whether the host guard admitted the attempt under way and its outcome is not recorded yet: a
   * half-open breaker's probe permission that is never given back keeps the breaker refusing the
   * host for good.
   */
  private boolean admitted;
  private int attemptsThisRun;
  private int inFlightThisRun;
  private boolean lastWasInFlight;
  private Duration previousDelay = Duration.ZERO;
  private ResponseSnapshot lastResponse;
  /**
   * The unchecked exception the journal threw (or Idem's own, on what the journal answered), if
   * one did: {@link #appCodeThrew} passes it on unchanged, since it is no failure of the app's
   * code. Set only when one is thrown, so that the happy path writes nothing.
   */
  private Throwable journalFailure;

  /** While the probes of a half-open breaker are out, a waiting call looks again this often. */
  private static final Duration HALF_OPEN_RECHECK = Duration.ofSeconds(1);
  /** The reason of a FAILED operation whose key the server refused as reused. */
  public static final String KEY_REUSED_REASON = "key reused: ";
  /** How records journaled before {@link #KEY_REUSED_REASON} existed said the same. */
  private static final String LEGACY_KEY_REUSED_REASON = "HTTP 422: the key was used with another payload";

  /**
   * @param claimed the lease the journal gave with the begin ({@link dev.idem.core.spi.Journal#beginAndClaim}),
   *     under which {@code record} is IN_FLIGHT: the first attempt is sent under it, with no claim
   *     of its own; null to claim at {@link #start()}
   * @param inline true for a caller waiting for the outcome (execute, executeAsync): an open breaker
   *     is waited out within the deadline, and the policy's bounds end the operation, FAILED if
   *     nothing was sent. False for queued delivery (resume, a dispatcher), for which an unreachable
   *     target is a state, not a failure: an operation that was not sent (refused, unresolvable,
   *     breaker open, budget empty) goes back to PENDING, and the deliverer comes back for it on its
   *     own schedule, until its age limit
   * @param named true if the app's call named this operation (execute, executeAsync, resume(id),
   *     resumeAsync(id)): its claims go through {@link dev.idem.core.spi.Journal#claimWaiting}, which
   *     may wait briefly for another process holding it, since an empty claim fails the app's call.
   *     False for a background pass (resumePending, an outbox dispatcher's delivery), whose claims
   *     skip such an operation at once, so that instances never wait on each other
   * @param created true if this (inline) call created the operation with its begin: it is then not
   *     subject to the age limit, since it ends within its own deadline. An inline call that found
   *     the operation journaled already is a resend as much as a resume is, and is (see
   *     {@link KeyRetention}); ignored for queued delivery, which always is
   * @param retention gives the execution its age limit
   */
  public AttemptLoop(EngineSettings settings, OperationRecord record, Lease claimed, RetryPolicy policy,
      boolean inline, boolean named, boolean created, KeyRetention retention) {
    this.s = settings;
    this.named = named;
    this.claimedAtBegin = claimed;
    this.inline = inline;
    this.ageLimit = inline && created ? null : retention.ageLimitOf(record).orElse(null);
    this.retention = retention;
    List<AttemptRecord> before = record.attempts();
    this.probing = !inline && !before.isEmpty()
        && before.get(before.size() - 1).classification() == Classification.SAFE;
    // The begin's own claim found the operation PENDING (not a takeover), one generation before.
    this.takingOver = claimed == null ? record.state() == OperationState.IN_FLIGHT : claimed.takeover();
    this.id = record.id();
    this.policy = policy;
    this.history = new ArrayList<>(record.attempts());
    this.generationSeen = claimed == null ? record.generation() : claimed.generation() - 1;
    this.lastResponse = record.response();
    this.host = HostGuard.hostOf(record.request().uri());
    this.createdAt = record.createdAt();
  }

  /**
   * From this instant this execution sends the operation no attempt; null for an inline call that
   * created it, or when there is no age limit (RESEND).
   */
  Instant ageLimit() {
    return ageLimit;
  }

  /**
   * Reports that the attempt {@link #start()} or {@link #afterWait()} let go was not sent because
   * the transport held it until the age limit ({@link AgeLimitAwareTransport}): the operation ends
   * at its age limit, as at a claim past it, under the claim made for the attempt, and no attempt
   * is recorded; the guard's permission is given back unused. If the limit does not apply after all
   * (the executor's clock disagrees with the transport's), the claim is given back and the
   * operation is PENDING, due now.
   */
  public Step notSentAtAgeLimit(PastAgeLimitException notSent) throws IdempotencyException {
    Step ended;
    try {
      ended = endAtAgeLimit();
    } finally {
      if (lease == null && admitted) {
        // Ended (or its end failed): nothing was sent on this permission.
        admitted = false;
        s.guard().release(host);
      }
    }
    return ended != null ? ended : new Step.Fail(interrupted(false, notSent));
  }

  /**
   * Whether this execution ended the operation at its age limit, sending nothing (a claim past the
   * limit, or an attempt held until it): its failure is then that end, which a resume pass counts
   * as expired. Read it after the loop's last step.
   */
  public boolean endedAtAgeLimit() {
    return endedAtAgeLimit;
  }

  /** The policy's per-attempt timeout, if it has one. */
  public Optional<Duration> attemptTimeout() {
    return policy.attemptTimeout();
  }

  /**
   * Claims the operation for its first attempt in this execution, or takes the claim the journal
   * made with the begin.
   */
  public Step start() throws IdempotencyException {
    try {
      return claim();
    } catch (RuntimeException | Error e) {
      return appCodeThrew(e, null, null);
    }
  }

  /**
   * Makes this loop's first claim only if the operation is still as {@code asRead} (its state and
   * generation): a delivery that read it a moment ago, and checked it was due, must not claim it if
   * another instance sent it since and queued it again until its backoff or {@code Retry-After}
   * (a plain claim takes any PENDING operation). Its later claims, after its own waits, are plain.
   * Call before {@link #start}.
   */
  public void fenceFirstClaimOn(OperationRecord asRead) {
    fenceFirstClaim = asRead;
  }

  /** Claims the operation again after a wait. */
  public Step afterWait() throws IdempotencyException {
    try {
      return claim();
    } catch (RuntimeException | Error e) {
      return appCodeThrew(e, null, null);
    }
  }

  private Step claim() throws IdempotencyException {
    Instant now = s.clock().instant();
    if (runStart == null) {
      // The deadline counts from the first claim, so that waiting for a breaker's probe spends it too.
      runStart = now;
    }
    Optional<Lease> claimed;
    if (claimedAtBegin != null) {
      claimed = Optional.of(claimedAtBegin);
      claimedAtBegin = null;
    } else if (fenceFirstClaim != null) {
      claimed = Claims.claimIfUnchanged(s.journal(), fenceFirstClaim, s.owner(), now, s.leaseFor());
      fenceFirstClaim = null;
    } else {
      claimed = Claims.claim(s.journal(), id, s.owner(), now, s.leaseFor(), named);
    }
    if (claimed.isEmpty()) {
      OperationRecord current = current();
      if (current.state().isTerminal()) {
        return settled(s, retention, current);
      }
      return new Step.Fail(new OperationPendingException(notClaimed(current), null, id, current.attempts(),
          current.response()));
    }
    lease = claimed.get();
    if (lease.generation() != generationSeen + 1 || takingOver || lease.takeover()) {
      // Someone else held the operation since this loop last saw it (another execution that began
      // concurrently, or another process on the same journal) and may have recorded attempts; or
      // this claim took over a holder's lease, for which Claims recorded the attempt the holder may
      // have sent. Take the history from the journal, so that numbering goes on and an
      // ambiguous attempt is never forgotten (giving up after it must end UNCERTAIN, not FAILED).
      OperationRecord current = current();
      history.clear();
      history.addAll(current.attempts());
      takingOver = false;
    }
    generationSeen = lease.generation();
    if (ageLimit != null && !now.isBefore(ageLimit)) {
      // Queued delivery schedules every retry to end before the age limit, but a sleeper or a
      // scheduler can wake late (a suspended machine, a GC pause, an overloaded scheduler): the
      // limit is checked again here, before each attempt, so that nothing is sent past it with a
      // key the server may have forgotten.
      Step ended = endAtAgeLimit();
      if (ended != null) {
        return ended;
      }
    }
    // Not a retry after an attempt the client itself kept from being sent (its worker queue was
    // full): charged as one, a full queue emptied the host's retry budget, and the app's inline
    // calls to that healthy host could then not retry a 503.
    chargedAsRetry = !history.isEmpty() && !lastWasInFlight
        && !NotSentLocally.class.getName().equals(history.get(history.size() - 1).exceptionClass());
    HostGuard.Refusal refusal = s.guard().admit(host, chargedAsRetry);
    if (refusal != HostGuard.Refusal.NONE) {
      return refused(refusal, now);
    }
    admitted = true;
    attemptStart = now;
    if (s.listening()) {
      s.emit(new IdemEvent.AttemptStarted(id, history.size() + 1, host));
    }
    return new Step.Send();
  }

  /**
   * Ends the operation this loop holds under {@link #lease} at its age limit, as
   * {@link KeyRetention#expireClaimed} ends it (UNCERTAIN if an attempt may have reached the
   * server, else FAILED), consuming the lease; nothing is sent.
   *
   * @return the step for the operation so ended; null if the limit does not apply after all (a
   *     re-drive since this loop read it moved its creation), and the loop still holds the lease
   */
  private Step endAtAgeLimit() throws IdempotencyException {
    Lease held = lease;
    // Not ours to give back if the end fails: the journal may have written it. The claim is then
    // left as it is, and the net (appCodeThrew) passes the failure on instead of writing PENDING.
    lease = null;
    if (!retention.expireClaimed(current(), held).isTerminal()) {
      lease = held;
      return null;
    }
    endedAtAgeLimit = true;
    return settled(s, retention, current());
  }

  /**
   * Why a claim returned nothing, from the record read after it: a live lease is named with its
   * owner; a record that no lease holds (PENDING, no owner) was being claimed or updated by another
   * process at the moment of the claim (on PostgreSQL, its row was locked), which is no lease.
   */
  private String notClaimed(OperationRecord current) {
    if (current.state() == OperationState.IN_FLIGHT && current.owner() != null) {
      return "operation " + id + " is IN_FLIGHT under owner " + current.owner() + " until "
          + current.leaseExpiresAt() + "; it will be sent again with the same key when that lease expires";
    }
    return "operation " + id + " is " + current.state() + " and held by no lease, but another process was claiming"
        + " or updating it when this call tried to claim it, so this call did not claim it and sent nothing; it"
        + " keeps its key: call again to send it (unless that process did), or wait for its outcome";
  }

  /**
   * The operation as the journal holds it now. A failure to read it, or a record the journal lost,
   * is the journal's ({@link #journalFailure}), not the app's code's.
   */
  private OperationRecord current() throws IdempotencyException {
    try {
      return s.journal().find(id)
          .orElseThrow(() -> new IllegalStateException("operation vanished from the journal: " + id));
    } catch (RuntimeException | Error e) {
      journalFailure = e;
      throw e;
    }
  }

  /**
   * The host's breaker is open or its retry budget is empty: nothing is sent, and the operation
   * goes back to PENDING, due when the host may take it again. Never FAILED. An open breaker is
   * waited out, if the deadline leaves time for the half-open probe; otherwise the call ends
   * PENDING and a deliverer sends it later. A wait never runs past the age limit: it ends there,
   * and the claim after it ends the operation as the limit says.
   */
  private Step refused(HostGuard.Refusal refusal, Instant now) throws IdempotencyException {
    boolean breaker = refusal == HostGuard.Refusal.BREAKER_OPEN;
    s.emit(breaker ? new IdemEvent.BreakerRejected(id, host) : new IdemEvent.BudgetDenied(id, host));
    if (breaker && inline) {
      Duration untilProbe = s.guard().untilProbe(host);
      Duration wait = untilProbe.compareTo(HALF_OPEN_RECHECK) > 0 ? untilProbe : HALF_OPEN_RECHECK;
      if (ageLimit != null && ageLimit.isAfter(now) && Duration.between(now, ageLimit).compareTo(wait) < 0) {
        // Nothing is sent at or past the age limit: the claim after a wait to it ends the operation
        // there, rather than a look at the breaker up to an open period later. A limit already
        // passed is one that did not apply at this claim (a re-drive moved the creation): no cap.
        wait = Duration.between(now, ageLimit);
      }
      Duration left = policy.deadline().minus(Duration.between(runStart, now));
      if (wait.compareTo(left) < 0) {
        String why = "circuit breaker open for " + host + "; waiting " + wait + " for its half-open probe";
        journalTransition(Transition.retryAt(now, now.plus(wait), why));
        lease = null;
        LOG.debug("operation {}: {}", id, why);
        return new Step.Wait(wait);
      }
    }
    Duration wait = breaker ? s.guard().untilProbe(host) : policy.maxDelay();
    if (wait.isZero()) {
      wait = HALF_OPEN_RECHECK;
    }
    String why = breaker ? "circuit breaker open for " + host : "retry budget for " + host + " is empty";
    Instant due = dueAfter(now, wait);
    journalTransition(Transition.retryAt(now, due, why));
    lease = null;
    return new Step.Fail(new OperationPendingException(why + "; operation " + id + " was not sent and is PENDING,"
        + " due again at " + due + ". It keeps its key: an OutboxDispatcher with a transport for '" + id.operation()
        + "' delivers it when due (OutboxDispatcher.await(id) gives its outcome), as do resumePending and executing"
        + " the same Operation again", null, id, history, lastResponse));
  }

  /**
   * {@code wait} after {@code now}, or the age limit if that comes first (never before now): at its
   * age limit the next deliverer ends the operation (see {@link KeyRetention#expireIfDue}) instead
   * of sending it.
   */
  private Instant dueAfter(Instant now, Duration wait) {
    Instant due = now.plus(wait);
    if (ageLimit == null || !due.isAfter(ageLimit)) {
      return due;
    }
    return ageLimit.isAfter(now) ? ageLimit : now;
  }

  /**
   * The step for an operation that the journal already holds in a terminal state: the stored
   * success, or the stored failure. Nothing is sent. A key the server refused as reused is reported
   * as on the execution that got the refusal: {@link IdempotencyKeyReusedException}.
   */
  public static Step settled(OperationRecord record) {
    return settled(record, false);
  }

  /**
   * {@link #settled(OperationRecord)}; {@code redriveCannotSend} if an attempt may have reached the
   * server and the operation is past its age limit ({@link KeyRetention#redriveCannotSend}): the
   * server may have forgotten the key, so a re-drive with the same key is no safe retry (and queued
   * delivery ends it again, unsent), and the message does not advise one.
   */
  static Step settled(OperationRecord record, boolean redriveCannotSend) {
    String pastLimit = "; a re-drive would not send it: an attempt may have reached the server more than its age"
        + " limit (maxPendingAge) ago, and the server may have forgotten the key. Reconcile it; if its effect does"
        + " not exist, send it again as a new operation (a new key)";
    return switch (record.state()) {
      case SUCCEEDED -> new Step.Done(new Outcome(record.id(), record.response(), false, true, record.attempts()));
      case FAILED -> isKeyReused(record)
          ? new Step.Fail(new IdempotencyKeyReusedException(record.id(), true, "server refused key "
              + record.id().key() + " as reused with another payload; operation " + record.id()
              + " already ended FAILED (" + record.reason() + "); nothing was sent"))
          : new Step.Fail(new OperationFailedException("operation " + record.id()
              + " already ended FAILED (" + record.reason() + ")"
              + (redriveCannotSend ? pastLimit : "; re-drive it to try again with the same key"), null,
              record.id(), record.attempts(), record.response(), true));
      case UNCERTAIN -> new Step.Fail(new OperationUncertainException("operation " + record.id()
          + " already ended UNCERTAIN (" + record.reason() + ")"
          + (redriveCannotSend ? pastLimit : "; reconcile or re-drive it with the same key"), null,
          record.id(), record.attempts(), record.response(), true));
      default -> throw new IllegalStateException(record.state() + " is not terminal");
    };
  }

  /**
   * {@link #settled(OperationRecord)}, telling the listener of a key refused as reused, as the
   * execution that got the refusal did, and advising a re-drive only where {@code retention} says
   * one can still send the operation safely.
   */
  public static Step settled(EngineSettings settings, KeyRetention retention, OperationRecord record) {
    Step step = settled(record, retention.redriveCannotSend(record));
    if (step.failure() instanceof IdempotencyKeyReusedException) {
      settings.emit(new IdemEvent.KeyMismatch(record.id(), true));
    }
    return step;
  }

  private static boolean isKeyReused(OperationRecord record) {
    String reason = record.reason();
    return reason != null && (reason.startsWith(KEY_REUSED_REASON) || reason.startsWith(LEGACY_KEY_REUSED_REASON));
  }

  /**
   * Reports the response of the attempt just sent. The protocol's signals (key reused, in flight,
   * key missing) are recognised first; the classifier judges every other response.
   */
  public Step onResponse(ResponseSnapshot response) throws IdempotencyException {
    if (response == null) {
      // The transport was called and answered nothing (an app's wrapper that swallowed the
      // client's response): the request may have gone out, so a failed attempt, ambiguous. Judged
      // as a response, it threw, and the safety net took it for an attempt never answered, so a
      // later permanent refusal ended the operation FAILED.
      return onFailure(new TransportFailure(new NullPointerException("the transport returned no response")));
    }
    try {
      return judgeAndDecide(response);
    } catch (RuntimeException | Error e) {
      return appCodeThrew(e, response, null);
    }
  }

  private Step judgeAndDecide(ResponseSnapshot response) throws IdempotencyException {
    lastResponse = response;
    int status = response.status();
    ProtocolStatuses protocol = s.protocol();
    if (protocol.isKeyReused(response)) {
      return keyReused(status);
    }
    if (protocol.isInFlight(response)) {
      return inFlight(response);
    }
    lastWasInFlight = false;
    if (protocol.isKeyMissing(response)) {
      return permanent(Verdict.permanent("HTTP " + status + ": the server says the idempotency key is missing or"
          + " malformed (configuration error)"), status, null, HostGuard.Health.UP);
    }
    Optional<Verdict> judged = judge(response);
    // Not orElse: its fallback, a new string, would be built for every response.
    Verdict v = judged.isPresent() ? judged.get()
        : Verdict.permanent("HTTP " + status + " (no classifier had an opinion)");
    HostGuard.Health health = HostGuard.healthOf(status, false);
    return switch (v.classification()) {
      case SUCCESS -> succeed(response, v);
      case PERMANENT -> permanent(v, status, null, health);
      default -> {
        Instant now = s.clock().instant();
        attemptsThisRun++;
        if (isReplayed(response)) {
          yield replayed(response, v, status, health, now);
        }
        RetryDecision d = policy.decide(attemptsThisRun, Duration.between(runStart, now), previousDelay,
            retryAfter(response), Optional.of(response), s.random());
        yield retryOrGiveUp(v, status, null, d, health, now);
      }
    };
  }

  /** The SEE OTHER status: after a POST, "done; the result is there". */
  private static final int SEE_OTHER = 303;

  /**
   * A response the classifier would retry, which the server marked as the replay of its stored
   * answer for this key ({@link EngineSettings#replayHeader()}: true). Another attempt with the same
   * key would only get the same answer again, so the retries stop here:
   * <ul>
   *   <li>a 303 See Other is the server's stored "done, the result is there" (Post/Redirect/Get):
   *       the request was processed, and the server says so by replaying it. SUCCEEDED with that
   *       response, as a replayed 2xx is. Only a replayed one: a first 303 may come from something
   *       other than the handler that stores answers (a login redirect), so it stays ambiguous and
   *       is retried, and the retry's replay, or a 2xx, settles it.</li>
   *   <li>any other status (a stored 500, 502, a 301 or 302, which do not say the request was done,
   *       a 2xx the app's classifier would not call a success): giving up at once, by the rule of
   *       every give-up, UNCERTAIN if this or an earlier attempt may have taken effect (an ambiguous
   *       status does), never FAILED while the effect may exist; FAILED only if every attempt was
   *       SAFE or TRANSIENT (a stored 503 that says "not processed").</li>
   * </ul>
   * A replayed 4xx, or anything the classifier calls PERMANENT or SUCCESS, never gets here: those
   * end as they would without the marker.
   */
  private Step replayed(ResponseSnapshot response, Verdict v, int status, HostGuard.Health health, Instant now)
      throws IdempotencyException {
    if (status == SEE_OTHER) {
      return succeed(response, Verdict.success("HTTP 303 replayed: the server's stored answer for this key, a See"
          + " Other to the result of the request it processed"));
    }
    return retryOrGiveUp(v, status, null, RetryDecision.stop("the server replayed its stored answer for this key ("
        + s.replayHeader() + ": true), which another attempt would only get again"), health, now);
  }

  /** Whether the server marked {@code response} as the replay of its stored answer for the key. */
  private boolean isReplayed(ResponseSnapshot response) {
    return response.header(s.replayHeader()).map(h -> h.trim().equalsIgnoreCase("true")).orElse(false);
  }

  /**
   * The classifier's verdict on a response. The app's classifier is the app's code: if it throws,
   * or answers null instead of {@link Optional#empty()}, the default table judges instead (and the
   * verdict's reason says so), rather than the attempt's outcome going unrecorded with the
   * operation left IN_FLIGHT. Null is not taken as "no opinion": that would make a response
   * PERMANENT, where the classifier most likely meant to leave it to the table. An Error that is
   * not {@linkplain #isFatal fatal} is judged around too: a NoClassDefFoundError for an optional
   * library the classifier reads with, an AssertionError, a StackOverflowError from a recursive
   * rule are the classifier's failures, not the JVM's.
   */
  private Optional<Verdict> judge(ResponseSnapshot response) {
    Optional<Verdict> v;
    try {
      v = s.classifier().classify(response);
    } catch (RuntimeException | Error e) {
      if (isFatal(e)) {
        throw e;
      }
      return byDefaultTable(DefaultClassifier.INSTANCE.classify(response), e);
    }
    return v != null ? v : byDefaultTable(DefaultClassifier.INSTANCE.classify(response), null);
  }

  /** {@link #judge(ResponseSnapshot)} for an attempt that got no response. */
  private Optional<Verdict> judge(IOException failure) {
    Optional<Verdict> v;
    try {
      v = s.classifier().classify(failure);
    } catch (RuntimeException | Error e) {
      if (isFatal(e)) {
        throw e;
      }
      return byDefaultTable(DefaultClassifier.INSTANCE.classify(failure), e);
    }
    return v != null ? v : byDefaultTable(DefaultClassifier.INSTANCE.classify(failure), null);
  }

  /**
   * The default table's verdict, for an attempt the classifier failed to judge.
   *
   * @param thrown what the classifier threw; null if it answered null
   */
  private Optional<Verdict> byDefaultTable(Optional<Verdict> table, Throwable thrown) {
    // The class only: its message may quote what the classifier read from the response.
    String what = thrown == null ? "answered null" : "threw " + thrown.getClass().getName();
    LOG.warn("operation {}: the classifier {}; Idem's default table judges this attempt instead", id, what);
    String why = thrown == null ? "answered null" : "threw " + thrown.getClass().getSimpleName();
    return table.map(v -> new Verdict(v.classification(), v.reason() + " (default table: the classifier " + why + ")"));
  }

  private Optional<Duration> retryAfter(ResponseSnapshot response) {
    return RetryAfter.parse(response.header("retry-after").orElse(null), s.clock().instant());
  }

  /** The server still runs a request with this key: wait for it, on the in-flight budget. */
  private Step inFlight(ResponseSnapshot response) throws IdempotencyException {
    Instant now = s.clock().instant();
    inFlightThisRun++;
    lastWasInFlight = true;
    Verdict v = Verdict.ambiguous("HTTP " + response.status() + ": a request with this key is still in flight");
    RetryDecision d = policy.decideInFlight(inFlightThisRun, Duration.between(runStart, now), previousDelay,
        retryAfter(response), Optional.of(response), s.random());
    return retryOrGiveUp(v, response.status(), null, d, HostGuard.Health.UNKNOWN, now);
  }

  /**
   * The server refused the key as used with another payload: never retried. FAILED, with
   * {@link IdempotencyKeyReusedException}, unless an earlier attempt may have taken effect (a read
   * timeout, a 500): then the server most likely holds this key from that attempt and refuses the
   * retry for something that changed in between (a refreshed header), or answers so to a duplicate
   * it processed; the effect may exist, so it ends UNCERTAIN, as {@link #permanent} does for any
   * other permanent answer after such an attempt. Reporting FAILED would invite a resubmission
   * with a new key: a second effect.
   */
  private Step keyReused(int status) throws IdempotencyException {
    Instant now = s.clock().instant();
    lastWasInFlight = false;
    // An earlier SUCCESS counts too, as in permanent(): only a crash that lost its transition leaves one.
    boolean ambiguousBefore = history.stream().anyMatch(AttemptRecord::mayHaveTakenEffect);
    String reason = KEY_REUSED_REASON + "HTTP " + status + ": the server holds this key for another payload";
    record(Verdict.permanent(reason), status, null, now, Duration.ZERO, "permanent: key reused",
        HostGuard.Health.UP);
    s.emit(new IdemEvent.KeyMismatch(id, true));
    if (ambiguousBefore) {
      String uncertain = reason + ", after an earlier ambiguous or successful attempt, which may have taken effect"
          + " (the server may hold the key from that attempt)";
      finish(OperationState.UNCERTAIN, now, uncertain);
      return new Step.Fail(new OperationUncertainException("operation " + id + " is UNCERTAIN: " + uncertain, null,
          id, history, lastResponse));
    }
    finish(OperationState.FAILED, now, reason);
    return new Step.Fail(new IdempotencyKeyReusedException(id, true, "server refused key " + id.key()
        + " as reused with another payload (HTTP " + status + "); operation " + id + " is FAILED"));
  }

  /**
   * Reports that the attempt just sent got no response. Only the default table can prove that
   * nothing was sent ({@link #mayHaveBeenSent}); any other failure may have taken effect, whatever
   * the classifier says: a SUCCESS verdict is overruled to AMBIGUOUS, and so are SAFE and TRANSIENT
   * verdicts on a failure that may have been sent (retried all the same), so that the attempt's
   * record says what every later decision needs, in this execution and the next ones (giving up,
   * a refusal on a later attempt, the age limit): the effect may exist. A PERMANENT verdict stays,
   * and {@link #permanent} ends UNCERTAIN on the same rule.
   *
   * <p>A failure that proves nothing was sent because the JVM itself is failing (a
   * {@link dev.idem.core.spi.RequestNotSentException} caused by a {@linkplain #isFatal fatal}
   * Error, such as a worker pool's {@code OutOfMemoryError: unable to create native thread}) is
   * not judged: see {@link #notSentThenFatal}.
   */
  public Step onFailure(IOException failure) throws IdempotencyException {
    Error fatal = fatalCauseOfUnsent(failure);
    if (fatal != null) {
      throw notSentThenFatal(failure, fatal);
    }
    try {
      return judgeAndDecide(failure);
    } catch (RuntimeException | Error e) {
      return appCodeThrew(e, null, failure);
    }
  }

  private Step judgeAndDecide(IOException failure) throws IdempotencyException {
    Verdict v = judge(failure).orElse(Verdict.ambiguous("no response: " + failure.getClass().getSimpleName()));
    if (v.classification() == Classification.SUCCESS) {
      // An exception cannot prove success; a classifier that says so is overruled, cautiously.
      v = Verdict.ambiguous(v.reason() + " (an exception cannot mean success)");
    } else if ((v.classification() == Classification.TRANSIENT || v.classification() == Classification.SAFE)
        && mayHaveBeenSent(failure)) {
      v = Verdict.ambiguous(v.reason() + " (no response arrived, so the request may have taken effect)");
    }
    lastWasInFlight = false;
    // Not sent for the client's own reason (its worker queue): nothing about the host.
    HostGuard.Health health = NotSentLocally.in(failure) ? HostGuard.Health.UNKNOWN
        : HostGuard.healthOf(v.classification());
    if (v.classification() == Classification.PERMANENT) {
      return permanent(v, null, failure, health);
    }
    Instant now = s.clock().instant();
    attemptsThisRun++;
    RetryDecision d = policy.decide(attemptsThisRun, Duration.between(runStart, now), previousDelay,
        Optional.empty(), Optional.empty(), Optional.of(failure), s.random());
    if (!inline && v.classification() == Classification.SAFE && (probing || !d.retry())) {
      return notSent(v, failure, now);
    }
    return retryOrGiveUp(v, null, failure, d, health, now);
  }

  /**
   * The {@linkplain #isFatal fatal} Error that caused {@code failure}, if the default table proves
   * it unsent; else null.
   */
  static Error fatalCauseOfUnsent(IOException failure) {
    if (failure.getCause() == null || mayHaveBeenSent(failure)) {
      return null;
    }
    for (Throwable t : Causes.of(failure.getCause())) {
      if (isFatal(t)) {
        return (Error) t;
      }
    }
    return null;
  }

  /**
   * The attempt was not sent because the JVM is failing ({@link #onFailure}): the two rules for
   * it hold together. Its record says not sent (SAFE, by Idem's default table, not the app's
   * classifier, which is not run on its account), so that the next claim does not owe it as
   * ambiguous and an operation that never left the process can still end FAILED; the operation
   * goes back to PENDING, due now, and the guard's permission is given back unused. Then the Error
   * is passed on unchanged, as a fatal Error the transport throws itself is
   * ({@link #transportThrew}): nothing more runs on its account, no retry, no backoff. If the
   * record or its write fails, that failure is suppressed in the Error, and the operation stays
   * as the journal last wrote it (IN_FLIGHT, owed as ambiguous by the claim that takes it over),
   * as after a fatal Error from the transport; a listener that throws when told of the attempt
   * changes none of it (its failure is suppressed in the Error too).
   *
   * @return never: throws {@code fatal}
   */
  private Error notSentThenFatal(IOException failure, Error fatal) {
    try {
      if (lease != null) {
        Instant now = s.clock().instant();
        Verdict table = DefaultClassifier.INSTANCE.classify(failure).orElseThrow();
        String why = table.reason() + " (the JVM failed with " + fatal.getClass().getName() + ")";
        try {
          record(new Verdict(table.classification(), why), null, failure, now, Duration.ZERO,
              "not sent; PENDING, due now: the JVM failed", HostGuard.Health.UNKNOWN);
        } catch (RuntimeException | Error e) {
          // A listener's Error on AttemptFinished, as in interrupted(): the attempt is held
          // already, so the PENDING write below still carries it.
          if (e != fatal) {
            fatal.addSuppressed(e);
          }
        }
        journalTransition(Transition.retryAt(now, now, why));
        lease = null;
      }
    } catch (IdempotencyException | RuntimeException | Error e) {
      if (e != fatal) {
        fatal.addSuppressed(e);
      }
    } finally {
      if (admitted) {
        admitted = false;
        s.guard().release(host);
      }
    }
    throw fatal;
  }

  /**
   * Queued delivery, and the attempt was certainly not sent: a probe of a target already known
   * unreachable, or the last attempt of a round. The target is offline, which is a state, not a
   * failure: the operation goes back to PENDING with its key, due again after the policy's
   * {@code maxDelay} (or at its age limit, if that comes first), and the deliverer backs off as a
   * whole. It ends only at its age limit, or when the target answers.
   */
  private Step notSent(Verdict v, IOException failure, Instant now) throws IdempotencyException {
    Instant due = dueAfter(now, policy.maxDelay());
    Duration wait = Duration.between(now, due);
    // Not sent for the client's own reason (its workers were busy, its pool refused): the host was
    // never tried, and "unreachable" would send an operator to a host that answered everything.
    boolean local = NotSentLocally.in(failure);
    String state = local ? "this client's own workers did not send it" : "the target is unreachable";
    String why = v.reason() + "; " + state;
    record(v, null, failure, now, wait, "not sent; PENDING until " + due + (local ? ", " + state
        : ", while the target is unreachable"), local ? HostGuard.Health.UNKNOWN : HostGuard.Health.DOWN);
    s.emit(new IdemEvent.RetryScheduled(id, wait, why));
    journalTransition(Transition.retryAt(now, due, why));
    lease = null;
    LOG.debug("operation {} attempt {}: {}; PENDING until {}", id, history.size(), why, due);
    return new Step.Fail(new OperationPendingException("operation " + id + " was not sent (" + v.reason()
        + "): " + state + ". It stays PENDING with its key, due again at " + due + ", and queued"
        + " delivery sends it " + (local ? "then" : "when the target answers") + (ageLimit == null ? ""
        : ", or ends it at its age limit at " + ageLimit + " (FAILED if no attempt can have reached the server)"),
        failure, id, history, lastResponse));
  }

  /**
   * The safety net under the app's own code that the loop calls once it holds the operation: the
   * classifier, the protocol's body predicates, the retry policy's delay function, the random
   * source, the retry budget, the listener, the clock. Each has its own cautious answer where one
   * exists (the default table for a classifier, "in flight" for a protocol predicate, the
   * exponential backoff for a delay function, "ignored" for a budget told of an outcome); anything
   * else they throw, here, after the claim and before the operation's next state is written, ends
   * the call this way:
   * <ul>
   *   <li>The attempt that was sent, if one was and it is not recorded yet, is recorded, judged by
   *       the default table with the cautious overrules the loop always applies (a 2xx becomes
   *       AMBIGUOUS, since it was not accepted as a success; a failure is AMBIGUOUS unless provably
   *       unsent). One already recorded but not yet written (a listener or the budget threw once
   *       it was judged) gets the net's decision, and a SUCCESS there becomes AMBIGUOUS too, as
   *       does any verdict on a failure that may have been sent ({@link #undecided}). The history never hides an effect, so whatever ends the operation
   *       later (giving up, a refusal, its age limit) never makes it FAILED while the effect may
   *       exist.</li>
   *   <li>The operation goes back to PENDING, with its key, due after the policy's
   *       {@code maxDelay} (or at its age limit), and the host guard's unused permission is given
   *       back. The call ends with {@link OperationPendingException}, whose cause is the app's
   *       exception: the caller is told what the journal holds.</li>
   * </ul>
   * Why PENDING: not FAILED, since nothing said the operation failed and the effect may exist; not
   * UNCERTAIN, which is terminal and means Idem gave up, when here it never got to decide, and the
   * key is still good: sending again with it is what the protocol makes safe (the server completes
   * or replays), so a resume, a dispatcher, or executing the same operation again carries on, and
   * at its age limit it ends from its history like any other. Due after {@code maxDelay} rather
   * than now, so that a bug that throws every time (a random source that answers 1.0) does not have
   * a dispatcher resend it in a tight loop. And not the raw exception with the operation left
   * IN_FLIGHT, which held it for the lease's length, told the caller nothing about it, and lost the
   * attempt from the history.
   *
   * <p>What it does not cover, each passed on unchanged, as before the net, with the operation as
   * the journal last wrote it:
   * <ul>
   *   <li>The journal's failures ({@link #journalFailure}): a checked IdempotencyException never
   *       gets here, and an unchecked one (a decorator's, the SPI's IllegalStateException, Idem's
   *       own on a record the journal lost) is no failure of the app's code. Writing PENDING over
   *       it would be wrong both ways: a write that failed before it stored anything took the
   *       attempt it carried with it (the net's plain PENDING would drop that ambiguous attempt
   *       from the history, where leaving the operation IN_FLIGHT has the next claim's takeover owe
   *       it), and one that failed after storing a terminal state would be contradicted.</li>
   *   <li>A {@linkplain #isFatal fatal} Error: the JVM's, not the app code's.</li>
   *   <li>Anything once the loop holds no lease (nothing claimed, or the operation's state already
   *       written).</li>
   *   <li>A PENDING write that itself fails (the clock throws again, the journal refuses it): the
   *       app's exception is passed on, the failure suppressed in it, rather than a
   *       PENDING the journal does not hold; the operation stays IN_FLIGHT until the lease
   *       expires, and the claim that takes it over then owes its attempt as AMBIGUOUS.</li>
   * </ul>
   * One place, under the four entry points both drivers call; a try block costs the happy path
   * nothing, and {@link #journalFailure} is written only on a failure.
   *
   * @param response the attempt's response, if the call came from {@link #onResponse}
   * @param failure the attempt's failure, if the call came from {@link #onFailure}
   */
  private Step appCodeThrew(Throwable e, ResponseSnapshot response, IOException failure) {
    if (lease == null || e == journalFailure || isFatal(e)) {
      throw unchecked(e);
    }
    String why = "the app's code threw " + e.getClass().getSimpleName() + " while the executor decided its next step";
    Instant due;
    try {
      Instant now = s.clock().instant();
      due = dueAfter(now, policy.maxDelay());
      boolean answered = response != null || failure != null;
      if (answered && admitted && unjournaled == null) {
        // Sent, and not recorded: record it as Idem's own table sees it, cautiously.
        Verdict v = response != null ? DefaultClassifier.INSTANCE.classify(response).orElseThrow()
            : DefaultClassifier.INSTANCE.classify(failure).orElseThrow();
        if (v.classification() == Classification.SUCCESS) {
          v = Verdict.ambiguous(v.reason() + " (not accepted as a success: " + why + ")");
        } else {
          v = new Verdict(v.classification(), v.reason() + " (default table: " + why + ")");
        }
        record(v, response == null ? null : response.status(), failure, now, Duration.between(now, due),
            "not decided; PENDING until " + due, HostGuard.Health.UNKNOWN);
      } else if (unjournaled != null) {
        undecided(why, now, due, failure);
      }
      journalTransition(Transition.retryAt(now, due, why));
      lease = null;
    } catch (IdempotencyException | RuntimeException | Error w) {
      if (w instanceof Error error && isFatal(error)) {
        if (error != e) {
          error.addSuppressed(e);
        }
        throw error;
      }
      // Not PENDING, so not said: the lease expires on its own, and the claim that takes the
      // operation over then owes the attempt that may have been sent.
      LOG.warn("operation {}: the app's code threw {} while the executor decided its next step, and the operation"
          + " could not be put back to PENDING ({}); it stays as the journal last wrote it", id,
          e.getClass().getName(), w.getClass().getName());
      if (w != e) {
        e.addSuppressed(w);
      }
      throw unchecked(e);
    } finally {
      if (admitted) {
        admitted = false;
        s.guard().release(host);
      }
    }
    LOG.warn("operation {}: the app's code threw {} while the executor decided its next step; the operation is"
        + " back to PENDING with its key, due at {}", id, e.getClass().getName(), due);
    return new Step.Fail(new OperationPendingException("operation " + id + " is PENDING: " + why + " (see the"
        + " cause). It keeps its key " + id.key() + " and is sent again with it when due at " + due + ", by an"
        + " OutboxDispatcher, resumePending, or executing the same Operation again", e, id, history, lastResponse));
  }

  /**
   * Rewrites the attempt {@link #record} holds, whose decision the net overrules before it is
   * written (a listener or budget threw after the attempt was judged: a success, a key refused as
   * reused, a retry, a permanent failure): its decision is the net's PENDING, and a SUCCESS becomes
   * AMBIGUOUS, as for an attempt the net records itself, since the operation it would have ended
   * SUCCEEDED is PENDING and a success beside it would read as settled. So does any other verdict
   * on a failure that {@linkplain #mayHaveBeenSent may have been sent}: the loop's caution for a
   * PERMANENT one is in the UNCERTAIN that {@link #permanent} ends with, not in the class, and the
   * net writes PENDING instead. Any other class stands: it was judged, with the loop's cautious
   * overrules, before the net took over.
   *
   * @param failure the held attempt's failure; null if it got a response
   */
  private void undecided(String why, Instant now, Instant due, IOException failure) {
    AttemptRecord held = unjournaled;
    boolean success = held.classification() == Classification.SUCCESS;
    boolean ambiguous = success || held.classification() != Classification.AMBIGUOUS && mayHaveBeenSent(failure);
    AttemptRecord a = new AttemptRecord(held.number(), held.generation(), held.startedAt(), held.endedAt(),
        ambiguous ? Classification.AMBIGUOUS : held.classification(), held.status(), held.exceptionClass(),
        held.reason() + (success ? " (not accepted as a success: "
            : ambiguous ? " (no response arrived, so the request may have taken effect; not decided: "
            : " (not decided: ") + why + ")",
        Duration.between(now, due), "not decided; PENDING until " + due);
    unjournaled = a;
    history.set(history.size() - 1, a);
  }

  /**
   * Whether an Error means the JVM itself is failing (out of memory, an internal error), so that
   * nothing more should run on its account: every VirtualMachineError but StackOverflowError. Any
   * other Error the app's code throws is that code's failure, as a RuntimeException would be: a
   * LinkageError (a class missing at run time, a static initializer that threw), an AssertionError,
   * a ServiceConfigurationError; and a StackOverflowError from a recursive rule, which the stack has
   * unwound by the time it is caught here, below the entry point.
   */
  private static boolean isFatal(Throwable e) {
    return e instanceof VirtualMachineError && !(e instanceof StackOverflowError);
  }

  /** {@code e}, which the caller caught as a RuntimeException or an Error, as one of the two again. */
  private static RuntimeException unchecked(Throwable e) {
    if (e instanceof Error error) {
      throw error;
    }
    return (RuntimeException) e;
  }

  /**
   * Leaves the operation PENDING after an interruption or cancellation, recording the attempt that
   * was on the wire (if any) as ambiguous. A listener that throws when told of that attempt (an
   * Error that is not {@linkplain #isFatal fatal}; it logs a RuntimeException) changes none of it:
   * the Error is suppressed in {@code cause}.
   *
   * @param onTheWire true if an attempt had been sent and not answered
   * @return the exception to report to the caller
   */
  public IdempotencyException interrupted(boolean onTheWire, Throwable cause) {
    if (lease == null && claimedAtBegin != null) {
      lease = claimedAtBegin; // stopped before start(): the claim made with the begin is given back too
      claimedAtBegin = null;
    }
    try {
      if (lease != null) {
        Instant now = s.clock().instant();
        if (onTheWire) {
          try {
            record(Verdict.ambiguous("interrupted while waiting for the response"), null, cause, now,
                Duration.ZERO, "interrupted; left PENDING", HostGuard.Health.UNKNOWN);
          } catch (RuntimeException | Error e) {
            // A listener's Error on AttemptFinished (a RuntimeException it logs and ignores): the
            // attempt is held already, so the PENDING write below still carries it, and the
            // caller still gets the cause, the listener's Error suppressed in it. The JVM's own is
            // passed on, as the net does, with nothing more run on its account.
            if (isFatal(e)) {
              throw e;
            }
            if (e != cause) {
              cause.addSuppressed(e);
            }
          }
        }
        journalTransition(Transition.retryAt(now, now, "interrupted or cancelled"));
        lease = null;
      }
    } catch (IdempotencyException | RuntimeException e) {
      // The lease expires on its own, after which the operation is due again: still never lost.
      if (e != cause) {
        cause.addSuppressed(e);
      }
    } finally {
      if (admitted) {
        // Admitted, then stopped before it was sent: the permission (a half-open probe's, maybe)
        // is given back unused, so that the breaker can probe the host again.
        admitted = false;
        s.guard().release(host);
      }
    }
    return new OperationPendingException("execution of " + id + " was interrupted or cancelled; the operation is"
        + " PENDING and will be sent again with the same key", cause, id, history, lastResponse);
  }

  /**
   * The transport threw an Error from its send call itself, for the attempt just sent (a custom
   * transport's AssertionError, a codec's NoClassDefFoundError): no I/O failure, so not retried,
   * but the request may have gone out. As for an Error the async transport's future completes with
   * ({@link #interrupted}): the attempt is recorded as ambiguous, the operation goes back to
   * PENDING with its key, and the guard's permission is given back; the driver then passes the
   * Error on as it is. A {@linkplain #isFatal fatal} one only has the permission given back, which
   * is cheap: nothing more runs on its account, and the operation stays IN_FLIGHT until a later
   * claim takes it over and owes its attempt as AMBIGUOUS.
   */
  public void transportThrew(Error e) {
    if (isFatal(e)) {
      if (admitted) {
        admitted = false;
        s.guard().release(host);
      }
      return;
    }
    interrupted(true, e);
  }

  private Step succeed(ResponseSnapshot response, Verdict v) throws IdempotencyException {
    Instant now = s.clock().instant();
    record(v, response.status(), null, now, Duration.ZERO, "success", HostGuard.Health.UP);
    journalTransition(Transition.finish(OperationState.SUCCEEDED, now, response, null));
    lease = null;
    boolean replayed = isReplayed(response);
    if (replayed) {
      s.emit(new IdemEvent.ReplaySeen(id));
    }
    if (s.listening()) {
      s.emit(new IdemEvent.Succeeded(id, history.size(), Duration.between(createdAt, now)));
    }
    // The history is the journal's: every attempt of this lease was written with it, under its fence.
    return new Step.Done(new Outcome(id, response, replayed, false, List.copyOf(history)));
  }

  private Step permanent(Verdict v, Integer status, IOException failure, HostGuard.Health health)
      throws IdempotencyException {
    Instant now = s.clock().instant();
    // An earlier SUCCESS counts too: only a crash that lost its transition leaves one behind.
    boolean ambiguousBefore = history.stream().anyMatch(AttemptRecord::mayHaveTakenEffect);
    record(v, status, failure, now, Duration.ZERO, "permanent: no retry", health);
    if (mayHaveBeenSent(failure)) {
      // The classifier says "don't retry", but without a response the request may have taken effect.
      String reason = v.reason() + "; no response arrived, so the request may have taken effect";
      finish(OperationState.UNCERTAIN, now, reason);
      return new Step.Fail(new OperationUncertainException("operation " + id + " is UNCERTAIN: " + reason, failure,
          id, history, lastResponse));
    }
    if (ambiguousBefore) {
      String reason = v.reason() + " after an earlier ambiguous or successful attempt, which may have taken effect";
      finish(OperationState.UNCERTAIN, now, reason);
      return new Step.Fail(new OperationUncertainException("operation " + id + " is UNCERTAIN: " + reason, failure, id,
          history, lastResponse));
    }
    finish(OperationState.FAILED, now, v.reason());
    return new Step.Fail(new OperationFailedException("operation " + id + " FAILED: " + v.reason(), failure, id,
        history, lastResponse));
  }

  /**
   * Whether an attempt that ended in {@code failure} may have reached the server, and so may have
   * taken effect: every failure but those the default table proves unsent (connect refused, DNS,
   * TLS handshake, connect timeout, {@link dev.idem.core.spi.RequestNotSentException}), whatever
   * the app's classifier said. The one rule for an attempt without a response; false for an
   * attempt that got one ({@code failure} null).
   */
  private static boolean mayHaveBeenSent(IOException failure) {
    return failure != null && !DefaultClassifier.INSTANCE.classify(failure)
        .map(v -> v.classification() == Classification.SAFE).orElse(false);
  }

  private Step retryOrGiveUp(Verdict v, Integer status, IOException failure, RetryDecision d,
      HostGuard.Health health, Instant now) throws IdempotencyException {
    boolean atAgeLimit = false;
    if (d.retry() && ageLimit != null && !now.plus(d.delay()).isBefore(ageLimit)) {
      if (inline) {
        // An inline call of an operation journaled before it sends nothing at or past the age limit
        // either, and its caller waits for an outcome: it gives up now, as at its policy's bounds,
        // but ends it as the limit would with the same history (UNCERTAIN if an attempt may have
        // reached the server, else FAILED), rather than leave it PENDING for a deliverer it may not run.
        d = RetryDecision.stop("the next attempt would fall at or past the age limit " + ageLimit);
        atAgeLimit = true;
      } else {
        // Queued delivery sends nothing at or past the age limit: leave the operation due at it, for
        // the next deliverer to end (KeyRetention.expireIfDue) with everything its history says.
        String why = v.reason() + "; the next attempt would fall at or past the age limit " + ageLimit;
        Instant due = dueAfter(now, d.delay());
        record(v, status, failure, now, Duration.between(now, due), "not retried: age limit", health);
        journalTransition(Transition.retryAt(now, due, why));
        lease = null;
        return new Step.Fail(new OperationPendingException("operation " + id + " is PENDING: " + why
            + "; it ends then, UNCERTAIN or FAILED, without being sent again", failure, id, history, lastResponse));
      }
    }
    record(v, status, failure, now, d.delay(), d.reason(), health);
    if (d.retry()) {
      LOG.debug("operation {} attempt {}: {}; retrying in {} ({})", id, history.size(), v.reason(), d.delay(),
          d.reason());
      s.emit(new IdemEvent.RetryScheduled(id, d.delay(), d.reason()));
      journalTransition(Transition.retryAt(now, now.plus(d.delay()), v.reason()));
      lease = null;
      previousDelay = d.delay();
      return new Step.Wait(d.delay());
    }
    boolean uncertain = atAgeLimit ? KeyRetention.mayHaveReachedServer(history)
        : history.stream().anyMatch(AttemptRecord::mayHaveTakenEffect);
    String reason = "gave up: " + d.reason() + "; last attempt: " + v.reason();
    finish(uncertain ? OperationState.UNCERTAIN : OperationState.FAILED, now, reason);
    LOG.warn("operation {} {} after {} attempts: {}", id, uncertain ? "is UNCERTAIN" : "FAILED", history.size(),
        reason);
    if (uncertain) {
      return new Step.Fail(new OperationUncertainException("operation " + id + " is UNCERTAIN: " + reason
          + (atAgeLimit ? "; an attempt may have reached the server, which may forget its key past the age limit"
              : "; an attempt may have taken effect"), failure, id, history, lastResponse));
    }
    return new Step.Fail(new OperationFailedException("operation " + id + " FAILED: " + reason, failure, id, history,
        lastResponse));
  }

  private void record(Verdict v, Integer status, Throwable failure, Instant end, Duration delay, String decision,
      HostGuard.Health health) throws IdempotencyException {
    AttemptRecord a = new AttemptRecord(history.size() + 1, lease.generation(), attemptStart, end,
        v.classification(), status, exceptionClass(failure), v.reason(), delay,
        decision);
    // Journaled with the transition that always follows (journalTransition): one write, not two.
    // Held before the guard is told, so that the attempt is written whatever happens next.
    unjournaled = a;
    history.add(a);
    admitted = false;
    s.guard().record(host, v.classification(), health, Duration.between(attemptStart, end), chargedAsRetry);
    if (s.listening()) {
      s.emit(new IdemEvent.AttemptFinished(id, a, host));
    }
  }

  /**
   * Moves the operation, writing the attempt {@link #record} just ended in the same journal call:
   * every attempt ends in a transition, and the two as one write are one statement in the JDBC
   * journal instead of two reads and two updates. An unchecked failure of the write is marked as
   * the journal's ({@link #journalFailure}), so that the safety net for the app's code passes it on.
   */
  private void journalTransition(Transition transition) throws IdempotencyException {
    AttemptRecord a = unjournaled;
    unjournaled = null;
    // Only the journal's copy: the caller's outcome or exception keeps the response whole.
    Transition t = s.secrets().persistable(transition);
    try {
      if (a == null) {
        s.journal().transition(id, lease, t);
      } else {
        s.journal().recordAttemptAndTransition(id, lease, a, t);
      }
    } catch (RuntimeException | Error e) {
      journalFailure = e;
      throw e;
    }
  }

  /** For a transport's RuntimeException, its own class rather than the wrapper's. */
  private static String exceptionClass(Throwable failure) {
    if (failure == null) {
      return null;
    }
    return (failure instanceof TransportFailure && failure.getCause() != null ? failure.getCause() : failure)
        .getClass().getName();
  }

  private void finish(OperationState target, Instant now, String reason) throws IdempotencyException {
    journalTransition(Transition.finish(target, now, lastResponse, reason));
    lease = null;
    Duration age = Duration.between(createdAt, now);
    s.emit(target == OperationState.UNCERTAIN ? new IdemEvent.Uncertain(id, history.size(), age, reason)
        : new IdemEvent.Failed(id, history.size(), age, reason));
  }
}
