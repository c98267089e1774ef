package dev.idem.server;

import dev.idem.core.ProtocolStatuses;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.http.KeyHeader;
import dev.idem.core.http.ProtocolHeaders;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Scheduler;
import dev.idem.server.internal.CompletionSignals;
import dev.idem.server.internal.FatalErrors;
import dev.idem.server.internal.GuardScheduler;
import dev.idem.server.internal.OwnerTokens;
import dev.idem.server.internal.PurgeJob;
import dev.idem.server.internal.RateLimitedLog;
import dev.idem.server.internal.RepeatPolls;
import dev.idem.server.internal.RequestFingerprints;
import dev.idem.server.internal.StoreCalls;
import dev.idem.server.internal.StoredHeaderValue;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.spi.StoredRecord;
import dev.idem.server.spi.StoredResponse;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * The server half of the idempotency protocol (seed 000), for any framework: an atomic claim per
 * operation, a fingerprint check, a stored result replayed with a marker, leases with fencing, and
 * a retention window. The Servlet and JDK HttpServer adapters drive it; so can any other.
 *
 * <p>For each request, an adapter calls {@link #admit}; on {@link Admission.Proceed} it runs the
 * handler and passes its response to {@link #complete} (or calls {@link #abandon} if the handler
 * threw); on {@link Admission.Respond} it sends the guard's response; on
 * {@link Admission.Unguarded} it runs the handler as if the guard were not there.
 *
 * <p><b>Transactional mode</b> (seed 000's strongest design), for a handler whose effect lives in
 * the same database as the guard's records: {@link #inTransaction(Connection, GuardRequest,
 * TransactionalHandler)} claims the operation, runs the handler and stores its result in one
 * transaction on the app's connection. A crash before the commit leaves no record and no effect;
 * after it, both. There is no lease to wait out after a restart, and a concurrent duplicate waits
 * on the database's lock, then gets the replay.
 *
 * <p>The defaults follow the IETF Idempotency-Key draft:
 * <ul>
 *   <li>The key header is {@value #DEFAULT_KEY_HEADER}, one field line holding a bare token or an
 *       RFC 8941 quoted string, 1 to 255 visible ASCII characters other than {@code "}, {@code ,}
 *       and {@code \}, read by the same parser as the client's ({@link KeyHeader}, which says why).
 *       A malformed key, a second field line, or two keys joined with a comma get 400.</li>
 *   <li>A keyed request whose caller (or route) holds a NUL or an unpaired surrogate, or is longer
 *       than {@link RecordId#MAX_CALLER_BYTES} ({@link RecordId#MAX_ROUTE_BYTES}) bytes in UTF-8,
 *       gets 400 and claims nothing ({@link Admission.Reason#IDENTITY_UNSTORABLE}): no store keeps
 *       it as given, and changed it could name another caller.</li>
 *   <li>POST and PATCH require a key (400 without one); other methods run unguarded without a key,
 *       and are guarded with one. Per-route {@link RoutePolicy policies} override this.</li>
 *   <li>A key is scoped per caller and route ({@link KeyScope#CALLER_AND_ROUTE}).</li>
 *   <li>A key reused with another payload gets 422; the fingerprint is sdk-core's
 *       {@link Fingerprinter} (RFC 8785 canonical JSON, raw bytes for other bodies) over method,
 *       path and query, and the body as sent.</li>
 *   <li>A repeat while the first request runs gets 409 with {@code Retry-After: 1}, at once; with
 *       {@link Builder#inFlightWait} it first waits that long (at most the caller's
 *       {@linkplain Builder#requestTimeoutHeader stated timeout}) for the first request's result.</li>
 *   <li>A repeat after it gets the stored status, the allowlisted headers and the body, with
 *       {@value #REPLAYED_HEADER}{@code : true}.</li>
 *   <li>Every result is stored except a 408, 425, 429 or 503 (the statuses that say "not
 *       processed, retry", which Idem's client retries), which release the claim, as does a thrown
 *       handler ({@link StoragePolicy#STORE_ALL_BUT_TRANSIENT}): a handler that committed its effect and then
 *       answered 500 is not run again by the retry.</li>
 *   <li>Refusals are RFC 9457 problem documents; {@link Builder#renderer} shapes them for other
 *       clients ({@link GuardRenderer#stripe()}).</li>
 *   <li>A claim holds a 30 s lease, renewed every 10 s while the handler runs. After a crash the
 *       lease expires and the next request with the key runs the handler again; an embedded SQLite
 *       store ends the leases of a dead run at open, and a named instance
 *       ({@link Builder#instanceId}) ends its own at start, so a restart is served at once. A handler whose
 *       claim was taken over (after its lease ran out) cannot store its result: {@link #complete}
 *       returns {@link CompletionResult#REFUSED}; one whose lease ran out with nobody taking it
 *       over still stores it, since no other handler can have run. The scheduler only times the renewals: each one's store
 *       call runs on a small pool of the guard's own ({@link Builder#storeExecutor}), so a renewal
 *       that hangs (a row lock, a stalled connection) or a long purge holds back no other claim's
 *       renewal.</li>
 *   <li>Results are kept for 24 h from completion, then purged (every 10 minutes); after retention
 *       the key is new again and a repeat runs the handler again.</li>
 *   <li>Request bodies over 1 MiB get 413 and claim nothing. Response bodies over 1 MiB go to the
 *       first caller in full but are not stored: the operation is recorded as done with its status
 *       and allowlisted headers, and a replay sends that status and those headers with an empty
 *       body, no {@code Content-Type} nor {@code Content-Encoding}, and
 *       {@value #REPLAY_BODY_HEADER}{@code : omitted}. The
 *       handler never runs twice for it; a client that needs the representation fetches it (from
 *       {@code Location}, say).</li>
 * </ul>
 *
 * <p>Thread-safe. Close it to stop its lease renewals and purge job; {@link #close()} waits up to
 * 5 s for a store call still running.
 */
public final class IdempotencyGuard implements AutoCloseable {
  /** The default name of the key header. */
  public static final String DEFAULT_KEY_HEADER = ProtocolHeaders.KEY;
  /** The header that marks a replayed result, as the IETF draft and Stripe name it. */
  public static final String REPLAYED_HEADER = ProtocolHeaders.REPLAYED;
  /** Sent on a replay whose body was over the capture cap and was not stored, with value {@code omitted}. */
  public static final String REPLAY_BODY_HEADER = "Idempotent-Replay-Body";

  private static final Logger LOG = LoggerFactory.getLogger(IdempotencyGuard.class);
  /** The client's default statuses (the IETF draft's), so that the two halves speak one protocol. */
  private static final ProtocolStatuses PROTOCOL = ProtocolStatuses.ietfDraft();
  private static final int MAX_ROUNDS = 400;

  private final GuardSettings s;
  private final GuardScheduler scheduler;
  private final RepeatPolls polls;
  private final StoreCalls storeCalls;
  private final OwnerTokens owners;
  private final CompletionSignals<RecordId> signals = new CompletionSignals<>();
  private final LeaseRenewals renewals;
  private final CompletionRetries retries;
  // Per-request failures that a store outage repeats on every request: logged once per interval.
  private final RateLimitedLog completionFailed;
  private final RateLimitedLog transactionFailed;
  private final PurgeJob purges;
  private volatile boolean closed;

  private IdempotencyGuard(GuardSettings settings) {
    this.s = settings;
    this.scheduler = new GuardScheduler(s.scheduler, s.renewEvery);
    this.polls = new RepeatPolls(scheduler);
    this.storeCalls = new StoreCalls(s.storeExecutor);
    this.renewals = new LeaseRenewals(scheduler, storeCalls, s.store, s.clock, s.lease, s.renewEvery, () -> closed);
    this.retries = new CompletionRetries(scheduler, storeCalls, s.clock, s.lease, s.renewEvery, () -> closed);
    this.completionFailed = new RateLimitedLog(LOG, "Could not store a completion or release a claim; its lease is"
        + " kept and the call tried again in the background", RateLimitedLog.DEFAULT_INTERVAL, s.clock, Level.WARN);
    this.transactionFailed = TransactionalRun.failureLog(s.clock);
    this.purges = new PurgeJob(scheduler, storeCalls, s.purgeInterval, () -> s.store.purgeExpired(s.clock.instant()),
        n -> hear(new GuardEvent.Purged(n)), cause -> hear(new GuardEvent.PurgeFailed(cause)), () -> closed);
    this.owners = new OwnerTokens(s.instanceId);
    if (s.instanceId != null) {
      int dead;
      try {
        dead = s.store.expireClaims(s.instanceId);
      } catch (RuntimeException e) {
        close();
        throw e;
      }
      if (dead > 0) {
        LOG.warn("Instance {}: {} claims left in flight by its earlier run end now; a retry of each runs at once",
            s.instanceId, dead);
        hear(new GuardEvent.Recovered(dead));
      }
    }
    purges.start();
  }

  /**
   * Starts a guard over {@code store}, with the defaults described on this class.
   *
   * @param store where operation records live; the guard does not close it
   * @return a builder
   */
  public static Builder builder(IdempotencyStore store) {
    return new Builder(store);
  }

  /**
   * The valid key in a key header's values, unquoted, as the guard reads it ({@link KeyHeader}).
   *
   * @param headerValues every value of the key header
   * @return the key, or empty if the header is absent or malformed
   */
  public static Optional<String> validKey(List<String> headerValues) {
    return KeyHeader.parse(headerValues).key().map(k -> k.value());
  }

  /**
   * Decides what to do with a request: claims its operation, or answers it.
   *
   * @param request the request
   * @return the decision
   * @throws IOException if the body could not be read
   * @throws IdempotencyStoreException if the store failed; answer {@link #unavailableResponse()}.
   *     The handler was not run. Usually nothing was claimed; but if the claim's commit was not
   *     confirmed (the connection dropped while the database answered it), the claim may be durable,
   *     held by no one, and a retry with the key is then answered "in flight" until its lease
   *     ({@link Builder#lease}) runs out, after which it runs the handler
   * @throws IllegalStateException if the guard is closed
   */
  public Admission admit(GuardRequest request) throws IOException {
    Prepared p = prepare(request);
    if (p.answer() != null) {
      return p.answer();
    }
    Instant started = s.clock.instant();
    Instant now = started;
    Duration wait = waitFor(request);
    // The wait is measured on the clock and, in case the clock steps back (which pushed a deadline
    // on the clock away: a repeat then held its thread until MAX_ROUNDS, minutes), also by the
    // pauses it made: whichever is longer ends it, as CompletionRetries does.
    Duration paused = Duration.ZERO;
    Duration pause = RepeatPolls.FIRST_POLL;
    CompletableFuture<Void> signal = null;
    // The fingerprint of the next claim: the request's, or for one claim only, that of a lapsed
    // claim stored before credential parameters were left out (see below).
    Fingerprint claimAs = p.fingerprint();
    int takeoverRounds = 0;
    try {
      for (int round = 0; ; round++) {
        String owner = ownerToken();
        Fingerprint claimedAs = claimAs;
        claimAs = p.fingerprint();
        ClaimAttempt attempt = s.store.claim(p.id(), claimedAs, owner, now, now.plus(s.lease),
            now.plus(p.policy().retention()));
        if (attempt instanceof ClaimAttempt.Claimed c && !claimedAs.equals(p.fingerprint()) && !c.tookOver()
            && round < MAX_ROUNDS) {
          // Claimed under the old fingerprint, but not the lapsed claim it was read as: the record
          // was released or purged between the read and this claim, and the operation would be
          // stored for its retention under the old fingerprint. Given back (it ran nothing) and
          // claimed again under the request's own.
          s.store.release(p.id(), c.generation(), owner);
          takeoverRounds++;
          continue;
        }
        if (attempt instanceof ClaimAttempt.Claimed c) {
          if (c.tookOver()) {
            hear(new GuardEvent.Takeover(p.route()));
          }
          heardWait(p.route(), started, round - takeoverRounds, true);
          Claim claim = new Claim(p.storedAs(claimedAs), now, c.generation(), owner, storagePolicy(p.policy()));
          renewals.start(claim);
          return new Admission.Proceed(claim, p.body());
        }
        if (attempt instanceof ClaimAttempt.Existing e) {
          StoredRecord r = e.record();
          // A mismatch wins over "in flight": a different payload under a used key is a client bug
          // that waiting will never fix, so "retry later" would be the wrong advice.
          if (!p.sameRequest(r.fingerprint())) {
            hear(new GuardEvent.Mismatch(p.route()));
            return respond(Admission.Reason.KEY_REUSED, reused());
          }
          if (r.state() == RecordState.COMPLETED && r.response().isPresent()) {
            heardWait(p.route(), started, round - takeoverRounds, true);
            hear(new GuardEvent.Replayed(p.route()));
            return respond(Admission.Reason.REPLAY, replay(r.response().get()));
          }
          if (!r.fingerprint().equals(p.fingerprint()) && r.state() == RecordState.IN_FLIGHT
              && !r.leaseUntil().isAfter(now) && round < MAX_ROUNDS) {
            // A lapsed claim stored under the query as written (before credential parameters were
            // left out): claimed again at once under its fingerprint, which a takeover compares.
            // Only this claim: one of a record released or purged meanwhile must store the
            // request's own fingerprint, or a retry with a refreshed token is refused 422.
            claimAs = r.fingerprint();
            takeoverRounds++;
            continue;
          }
        }
        // In flight (or released or purged between the claim and the read: the next round claims it).
        now = s.clock.instant();
        boolean vanished = !(attempt instanceof ClaimAttempt.Existing);
        Duration measured = Duration.between(started, now);
        Duration spent = measured.compareTo(paused) > 0 ? measured : paused;
        if ((spent.compareTo(wait) >= 0 && !(vanished && round == 0)) || round >= MAX_ROUNDS || closed) {
          heardWait(p.route(), started, round - takeoverRounds, false);
          hear(new GuardEvent.Conflict(p.route()));
          return respond(Admission.Reason.IN_FLIGHT, inFlight());
        }
        if (vanished && round == 0) {
          continue;
        }
        if (signal == null) {
          signal = signals.watch(p.id());
        }
        Duration left = wait.minus(spent);
        Duration thisPause = pause.compareTo(left) < 0 ? pause : left;
        Instant pauseStart = s.clock.instant();
        if (!polls.pause(signal, thisPause)) {
          heardWait(p.route(), started, round - takeoverRounds, false);
          hear(new GuardEvent.Conflict(p.route()));
          return respond(Admission.Reason.IN_FLIGHT, inFlight());
        }
        if (signal.isDone()) {
          // Woken by the key's signal, perhaps early (a completion's first store failure also
          // signals): only the time the clock saw counts, within the pause, or the wait ended early.
          Duration took = Duration.between(pauseStart, s.clock.instant());
          paused = paused.plus(took.isNegative() ? Duration.ZERO : took.compareTo(thisPause) > 0 ? thisPause : took);
          signal = null; // used up: the next round watches afresh
        } else {
          paused = paused.plus(thisPause);
        }
        pause = RepeatPolls.after(pause);
        now = s.clock.instant();
      }
    } finally {
      if (signal != null) {
        signals.leave(p.id(), signal);
      }
    }
  }

  /**
   * Ends a claim with the handler's response: stores it, or releases the claim, as the
   * {@link StoragePolicy} says. Stops renewing the lease.
   *
   * @param claim the claim from {@link Admission.Proceed}
   * @param response what the handler answered
   * @return what happened; on {@link CompletionResult#REFUSED} send {@link #refusedResponse()}
   * @throws IdempotencyStoreException if the store failed. The claim stays in flight, its lease
   *     renewed, and the guard tries the completion again in the background (backing off from
   *     100 ms up to the renewal period) until it lands, the store says the claim was lost, the
   *     guard closes, or one lease period has passed since this failure (on the guard's clock, the
   *     failed store calls' time included; never less than the pauses timed on the scheduler, so a
   *     wall clock set back does not prolong it); meanwhile a retry of the key gets 409. Send the
   *     handler's answer anyway: its effect happened. If the retries give up (or this process dies
   *     first), the lease runs out and a retry of the key runs the handler again
   * @throws IllegalArgumentException if the status is outside 100..599, or
   *     {@link NullPointerException} if a kept header has a null value: the response cannot be
   *     stored, so the claim is released, as by {@link #abandon}, and a retry runs the handler again
   * @throws IllegalStateException if the claim was already completed or abandoned
   */
  public CompletionResult complete(Claim claim, CapturedResponse response) {
    Objects.requireNonNull(claim, "claim");
    Objects.requireNonNull(response, "response");
    boolean stores = claim.storagePolicy().stores(response.status());
    StoredResponse stored;
    try {
      requireHttpStatus(response.status());
      stored = stores ? toStored(response) : null;
    } catch (RuntimeException e) {
      // Converted before finish(): once finished, abandon() does nothing, so a response the store
      // cannot keep would leave the claim in flight (renewed while the completion is retried, then
      // until its lease ran out). A handler that answers what HTTP cannot carry has failed: release it.
      try {
        abandon(claim);
      } catch (RuntimeException release) {
        e.addSuppressed(release);
      }
      throw e;
    }
    // Finished (no second completion), but its lease stays renewed until the store call lands: if
    // it fails, it is tried again in the background, and meanwhile a retry of the key must get 409,
    // not take the claim over once the lease ran out and run the handler a second time.
    if (!claim.finishKeepingLease()) {
      throw new IllegalStateException(claim + " was already completed or abandoned");
    }
    CompletionResult result = end(claim, stored == null ? CompletionRetries.Kind.RELEASE : CompletionRetries.Kind.STORE,
        now -> storeCompletion(claim, stored, now));
    if (result == CompletionResult.REFUSED) {
      LOG.warn("Refused a stale completion of {}: another request took it over after its lease ran out", claim);
    }
    ended(claim, result);
    return result;
  }

  /**
   * Runs the store call that ends a claim finished with its lease kept, and stops the renewals once
   * it landed. If it fails, {@link CompletionRetries} tries it again in the background with the lease
   * still renewed, and tells the listener how it ended.
   *
   * @return what the store call came to
   * @throws RuntimeException what the store call failed with, once the retries have started
   */
  private CompletionResult end(Claim claim, CompletionRetries.Kind kind, CompletionRetries.Attempt attempt) {
    CompletionResult result;
    try {
      result = attempt.run(s.clock.instant());
    } catch (RuntimeException e) {
      LOG.debug("Could not {}; its lease is kept and the call tried again in the background", kind.act(claim), e);
      completionFailed.failed(e);
      try {
        retries.start(claim, attempt, kind, later -> {
          signals.signal(claim.id());
          // Given up (null): the result was never stored and the lease runs out, so a retry runs
          // the handler again; an unknown outcome, counted as REFUSED, as a lost lease is.
          ended(claim, later != null ? later : CompletionResult.REFUSED);
        });
      } catch (RuntimeException | Error start) {
        claim.stopRenewals();
        e.addSuppressed(start);
      }
      signals.signal(claim.id());
      throw e;
    } catch (Error e) {
      // Not tried again (an OutOfMemoryError, a StackOverflowError or NoClassDefFoundError in a
      // driver is no store blip), so nothing else would ever stop the renewals: the lease would be
      // renewed for the guard's life and a retry of the key get 409 forever. Stopped, the lease runs
      // out and a retry runs the handler again, as when the process dies.
      claim.stopRenewals();
      signals.signal(claim.id());
      throw e;
    }
    completionFailed.succeeded();
    claim.stopRenewals();
    signals.signal(claim.id());
    return result;
  }

  /** One store call ending a claim: stores its response, or releases it when there is none to store. */
  private CompletionResult storeCompletion(Claim claim, StoredResponse stored, Instant now) {
    if (stored == null) {
      return s.store.release(claim.id(), claim.generation(), claim.owner())
          ? CompletionResult.RELEASED : CompletionResult.REFUSED;
    }
    return s.store.complete(claim.id(), claim.generation(), claim.owner(), now, stored, now.plus(claim.retention()))
        ? CompletionResult.STORED : CompletionResult.REFUSED;
  }

  /**
   * Releases a claim whose handler threw, so that a retry runs it again. Stops renewing the lease
   * once the release landed. Does nothing if the claim was already completed or abandoned.
   *
   * @param claim the claim from {@link Admission.Proceed}
   * @throws IdempotencyStoreException if the store failed. As for a failed {@link #complete}, the
   *     claim stays in flight, its lease renewed, and the guard tries the release again in the
   *     background (backing off from 100 ms, for at most one lease period); meanwhile a retry of the
   *     key gets 409, never a second run of the handler beside this one, and once the release
   *     landed a retry runs the handler. If the retries give up, the lease runs out and a retry
   *     then runs the handler
   */
  public void abandon(Claim claim) {
    Objects.requireNonNull(claim, "claim");
    // Finished, but with its lease kept until the release lands: a release that fails is tried again
    // as a completion is, so that one store blip does not hold the key 409 for a whole lease, and
    // meanwhile no retry can take the claim over.
    if (claim.finishKeepingLease()) {
      ended(claim, end(claim, CompletionRetries.Kind.RELEASE, now -> storeCompletion(claim, null, now)));
    }
  }

  /**
   * Lets go of a claim whose handler may still be running but whose answer will never reach the
   * guard, such as an async request that the Servlet container timed out: the container answers
   * the client itself and does not stop the async work, whose effect may still happen. Releasing
   * the claim, as {@link #abandon} does, would let a retry of the key run the handler a second
   * time beside the first. Instead nothing is stored and the claim is not released: its lease stays
   * renewed for one more lease period ({@link Builder#lease}, 30 s by default) after this call, then
   * the renewals stop and the lease runs out, so the key stays in flight for between one and two
   * lease periods after this call. Meanwhile a retry of the key gets 409 (or waits, with
   * {@link Builder#inFlightWait}); after it, a retry runs the handler again, as after a crash. A
   * handler that may run longer than that past its async timeout needs a longer lease. Never calls
   * the store. Does nothing if the claim was already completed, abandoned or let go.
   *
   * @param claim the claim from {@link Admission.Proceed}
   */
  public void letGo(Claim claim) {
    Objects.requireNonNull(claim, "claim");
    if (!claim.finishKeepingLease()) {
      return;
    }
    // Bounded: the handler's end may never be seen (the container has already completed the request),
    // and a key renewed until then could be held in flight for the guard's life.
    try {
      scheduler.schedule(claim::stopRenewals, s.lease);
    } catch (RuntimeException | Error e) {
      // The guard is closing (its renewals stop too): the lease runs out on its own.
      claim.stopRenewals();
    }
  }

  /**
   * What to send instead of a response whose completion was {@link CompletionResult#REFUSED}: a
   * 409 with {@code Retry-After} (when configured), since another request may now hold the
   * operation and a retry will get its result.
   *
   * @return the response
   */
  public GuardResponse refusedResponse() {
    return s.renderer.refusal(new Refusal(Refusal.Kind.CLAIM_LOST, 409, s.keyHeader,
        "The claim on this " + s.keyHeader + " expired before its result was stored",
        "Another request may now be processing it; retry to get its result.", s.inFlightRetryAfter));
  }

  /**
   * What to send when the store failed in {@link #admit}: 503 with {@code Retry-After: 1}.
   * Nothing was claimed, so a retry is safe.
   *
   * @return the response
   */
  public GuardResponse unavailableResponse() {
    return unavailable("Nothing was processed; retry later.");
  }

  /**
   * Transactional mode on a connection of the app, for a handler whose effect is in the same
   * database as this guard's records (its store is a {@link JdbcIdempotencyStore} on that
   * database): claims the operation, runs the handler and stores its result in one transaction,
   * which the guard begins, commits, or rolls back. A crash before the commit leaves neither the
   * record nor the effect; after it, both, and a retry gets the replay. There is no lease: nothing
   * is visible to another request before the commit, and nothing can stay in flight after a crash.
   *
   * <ul>
   *   <li>A repeat that arrives while the first request's transaction is open waits on the
   *       database's lock, then gets the replay. On PostgreSQL the wait lasts at most
   *       {@link Builder#inFlightWait} (and the caller's stated timeout), then it is answered 409;
   *       with neither set it lasts as long as the database lets it ({@code lock_timeout}). On
   *       SQLite, which has one writer at a time, every write waits for it up to the connection's
   *       busy timeout, and a wait that ends is answered 503.</li>
   *   <li>The {@linkplain StoragePolicy storage policy} decides the transaction: a stored status
   *       commits with the handler's writes, and a released one (408, 425, 429 or 503 by default) rolls them back
   *       with the claim, so a 500 and its effect commit together or not at all.</li>
   *   <li>A handler that throws rolls everything back; the exception is rethrown.</li>
   *   <li>A database failure in the guard's own steps or the commit rolls back and is answered
   *       with {@link #unavailableResponse()}-like 503: a retry is safe, since it finds either the
   *       stored result (the commit did happen) or nothing.</li>
   * </ul>
   *
   * <p>Keep the transaction short: do not call a slow remote system from the handler, since the
   * row lock, the connection and every duplicate wait with it. For an effect elsewhere, record the
   * intent here (an outbox row, a job keyed by {@link Claim#operationId()}) and perform it after
   * the commit, with Idem's client and the same identity as its key.
   *
   * <p>Send the returned response only after this method returns: it has committed by then.
   * Request bodies are read up to {@link #maxRequestBody()} here, keyed or not.
   *
   * @param connection the app's connection to the database of the guard's records; the guard sets
   *     auto-commit off for the call and restores it, and does not close the connection
   * @param request the request
   * @param handler the business action, run at most once per committed operation
   * @return the response to send: the handler's (all of its headers), a replay or a refusal
   * @throws IOException if the body could not be read
   * @throws SQLException if the handler threw it (everything was rolled back), or the connection
   *     failed before the guard could begin
   * @throws IllegalArgumentException if the handler's response cannot be stored (a status outside
   *     100..599); everything was rolled back, as for a handler that threw
   * @throws IllegalStateException if the guard is closed or its store is not a {@link JdbcIdempotencyStore}
   */
  public GuardResponse inTransaction(Connection connection, GuardRequest request, TransactionalHandler handler)
      throws IOException, SQLException {
    return TransactionalRun.run(this, Objects.requireNonNull(connection, "connection"), request, handler, true);
  }

  /**
   * Transactional mode with a connection from {@code dataSource}, closed (returned to its pool)
   * afterwards; see {@link #inTransaction(Connection, GuardRequest, TransactionalHandler)}.
   *
   * @param dataSource connections to the database of the guard's records
   * @param request the request
   * @param handler the business action, run at most once per committed operation
   * @return the response to send
   * @throws IOException if the body could not be read
   * @throws SQLException if the handler threw it (everything was rolled back), or no connection
   *     could be had
   * @throws IllegalStateException if the guard is closed or its store is not a {@link JdbcIdempotencyStore}
   */
  public GuardResponse inTransaction(DataSource dataSource, GuardRequest request, TransactionalHandler handler)
      throws IOException, SQLException {
    Objects.requireNonNull(dataSource, "dataSource");
    try (Connection c = dataSource.getConnection()) {
      return inTransaction(c, request, handler);
    }
  }

  /**
   * Transactional mode inside a transaction that someone else began and will end: the hook for a
   * transaction manager, which supplies its connection (with Spring, {@code
   * DataSourceUtils.getConnection(dataSource)} inside a transactional method). The guard claims,
   * runs the handler and stores the result on that connection, and never commits. It works within
   * a savepoint: a released status (408, 425, 429 or 503 by default) or a thrown handler rolls back to it, undoing
   * the claim and the handler's writes, and a repeat that waited too long on PostgreSQL is answered
   * 409 with the transaction still usable.
   *
   * <p>The caller commits, then sends the returned response; if the commit fails, it must not
   * send it (answer {@link #unavailableResponse()}: a retry is safe). If this method throws, roll
   * the transaction back.
   *
   * @param connection a connection in a transaction (auto-commit off), to the database of the
   *     guard's records
   * @param request the request
   * @param handler the business action
   * @return the response to send once the transaction has committed
   * @throws IOException if the body could not be read
   * @throws SQLException if the handler threw it; the savepoint was rolled back
   * @throws IllegalArgumentException if the handler's response cannot be stored (a status outside
   *     100..599); the savepoint was rolled back
   * @throws IdempotencyStoreException if the guard's own steps failed; roll the transaction back
   * @throws IllegalStateException if the connection is in auto-commit mode, the guard is closed, or
   *     its store is not a {@link JdbcIdempotencyStore}
   */
  public GuardResponse joinTransaction(Connection connection, GuardRequest request, TransactionalHandler handler)
      throws IOException, SQLException {
    return TransactionalRun.run(this, Objects.requireNonNull(connection, "connection"), request, handler, false);
  }

  /**
   * Lists records for an operator, oldest claim first: claims in flight, stuck ones (lease
   * expired: their holder died or stalled), released ones, old ones. An operator's tool on
   * another process opens the store itself and calls {@link IdempotencyStore#records} (for
   * SQLite, through {@link JdbcIdempotencyStore#openReadOnly}).
   *
   * @param query which records, at most how many
   * @return one page; never a stored body or fingerprint
   * @throws IdempotencyStoreException if the store failed
   * @throws UnsupportedOperationException if the store cannot list its records
   */
  public RecordPage records(RecordQuery query) {
    return s.store.records(Objects.requireNonNull(query, "query"), s.clock.instant());
  }

  /**
   * Counts records by state now: in flight, stuck, completed, released, and the age of the oldest
   * claim in flight.
   *
   * @return the counts
   * @throws IdempotencyStoreException if the store failed
   * @throws UnsupportedOperationException if the store cannot count its records
   */
  public RecordStats stats() {
    return s.store.stats(s.clock.instant());
  }

  /**
   * What to send when a transactional handler threw: 500, in the renderer's shape. Its transaction
   * rolled back, so nothing was done and a retry runs it again.
   *
   * @return the response
   */
  public GuardResponse failedResponse() {
    return s.renderer.refusal(new Refusal(Refusal.Kind.HANDLER_FAILED, 500, s.keyHeader, "The request failed",
        "Nothing was committed; a retry runs it again.", null));
  }

  /**
   * Deletes records past retention now. The guard also does this on its own at the purge
   * interval.
   *
   * @return how many records were deleted
   * @throws IdempotencyStoreException if the store failed
   */
  public int purgeExpired() {
    int n = s.store.purgeExpired(s.clock.instant());
    hear(new GuardEvent.Purged(n));
    return n;
  }

  /**
   * The failure of the last background purge, cleared by the next one that succeeds. A failed
   * purge does not make the guard unsafe (expired records are treated as absent anyway), but the
   * store grows until it succeeds.
   *
   * @return the failure, if the last purge failed
   */
  public Optional<RuntimeException> lastPurgeFailure() {
    return Optional.ofNullable(purges.lastFailure());
  }

  /** {@return the name of the key header} */
  public String keyHeader() {
    return s.keyHeader;
  }

  /**
   * The header in which callers state how long they wait, for adapters to read into
   * {@link GuardRequest#callerTimeout()}.
   *
   * @return the header name, or null if none is configured
   */
  public String requestTimeoutHeader() {
    return s.requestTimeoutHeader;
  }

  /** {@return the longest request body the guard reads, in bytes} */
  public int maxRequestBody() {
    return s.maxRequestBody;
  }

  /** {@return the longest response body an adapter captures for storage, in bytes} */
  public int maxCapturedBody() {
    return s.maxCapturedBody;
  }

  /** {@return the store} */
  public IdempotencyStore store() {
    return s.store;
  }

  /**
   * Stops lease renewals and the purge job, and the guard's own threads if it made them: no store
   * call starts after this. A store call still running on the guard's own
   * {@linkplain Builder#storeExecutor store pool} is waited for, up to 5 s, so that the store can
   * be closed next; one that runs longer is interrupted, with a warning. Called on one of the
   * guard's own threads (by a {@link GuardListener} hearing {@link GuardEvent.PurgeFailed}, which a
   * failed purge tells on a store thread, and a purge the store executor refused on the scheduler's
   * thread), it waits for the other calls only, and never interrupts its own thread. Does not close
   * the store, nor shut down or interrupt an executor or scheduler the app gave. Idempotent.
   */
  @Override
  public void close() {
    closed = true;
    scheduler.close();
    signals.wakeAll();
    storeCalls.close();
  }

  /**
   * A request read, checked and identified; or the answer that ends it before any claim.
   *
   * @param answer the guard's answer ({@link Admission.Respond} or {@link Admission.Unguarded}), or null
   * @param asWritten the fingerprint of the request's query and body as written, credential
   *     parameters included, if it has any ({@link RequestFingerprints#asWritten}), else null: a
   *     record stored before those parameters were left out of the fingerprint has it
   */
  record Prepared(Admission answer, RecordId id, Fingerprint fingerprint, Fingerprint asWritten, byte[] body,
      RoutePolicy policy, String route) {
    static Prepared answered(Admission answer) {
      return new Prepared(answer, null, null, null, null, null, null);
    }

    /** Whether a record of this request's key was stored for this request. */
    boolean sameRequest(Fingerprint stored) {
      return stored.equals(fingerprint) || stored.equals(asWritten);
    }

    /**
     * This request as claimed under {@code stored}: the fingerprint its key's record keeps (a lapsed
     * claim stored before credential parameters were left out, taken over under it); the other
     * fingerprint is kept, so that the request still matches a record stored under either.
     */
    Prepared storedAs(Fingerprint stored) {
      return stored.equals(fingerprint) ? this : new Prepared(answer, id, stored, fingerprint, body, policy, route);
    }
  }

  /** Everything before the claim: an open guard, key, body cap, fingerprint and identity. */
  Prepared prepare(GuardRequest request) throws IOException {
    Objects.requireNonNull(request, "request");
    if (closed) {
      throw new IllegalStateException("the idempotency guard is closed");
    }
    String route = request.method() + " " + request.path();
    RoutePolicy policy = policy(request.method(), route);
    KeyHeader key = KeyHeader.parse(request.keyHeaderValues());
    if (key.isAbsent()) {
      if (policy.keyRequired()) {
        return Prepared.answered(respond(Admission.Reason.KEY_MISSING, s.renderer.refusal(new Refusal(
            Refusal.Kind.KEY_MISSING, PROTOCOL.keyMissingStatus(), s.keyHeader, s.keyHeader + " is missing",
            "This operation is idempotent and requires an " + s.keyHeader + " header.", null))));
      }
      return Prepared.answered(new Admission.Unguarded());
    }
    if (key.key().isEmpty()) {
      return Prepared.answered(respond(Admission.Reason.KEY_MALFORMED, s.renderer.refusal(new Refusal(
          Refusal.Kind.KEY_MALFORMED, PROTOCOL.keyMissingStatus(), s.keyHeader, s.keyHeader + " is malformed",
          "The " + s.keyHeader + " header has " + key.problem().orElseThrow() + ".", null))));
    }
    RecordId id = s.scope.id(request.caller(), route, key.key().get().value());
    String unstorable = id.unstorable();
    if (unstorable != null) {
      // Refused, never changed: a changed (or cut) caller could be another tenant's, and share its
      // records; and not a 503, which a retry never gets past. Only what the scope keeps is
      // checked: under KeyScope.ROUTE the caller is never stored.
      return Prepared.answered(respond(Admission.Reason.IDENTITY_UNSTORABLE, s.renderer.refusal(new Refusal(
          Refusal.Kind.IDENTITY_UNSTORABLE, 400, s.keyHeader, "The idempotency scope of this request cannot be stored",
          "The " + unstorable + ", which the idempotency store cannot keep as given (this request is scoped by"
              + " it); nothing was processed, and the same request is refused again.", null))));
    }
    byte[] body = request.body().read(s.maxRequestBody + 1);
    if (body.length > s.maxRequestBody) {
      return Prepared.answered(tooLarge());
    }
    RequestFingerprints.Both prints = RequestFingerprints.both(request, body, s.fingerprintMode);
    return new Prepared(null, id, prints.fingerprint(), prints.asWritten(), body, policy, route);
  }

  Admission tooLarge() {
    return respond(Admission.Reason.BODY_TOO_LARGE, s.renderer.refusal(new Refusal(Refusal.Kind.BODY_TOO_LARGE, 413,
        s.keyHeader, "Content Too Large",
        "An idempotent request body may have at most " + s.maxRequestBody + " bytes; nothing was processed.", null)));
  }

  /** How long a repeat may wait for the first request: the configured wait, within the caller's. */
  private Duration waitFor(GuardRequest request) {
    Duration caller = request.callerTimeout();
    return caller != null && caller.compareTo(s.inFlightWait) < 0 ? caller : s.inFlightWait;
  }

  /**
   * The lock wait of a transactional claim on PostgreSQL: the configured wait, within the caller's;
   * null to leave it to the database.
   */
  Duration lockWait(GuardRequest request) {
    return s.inFlightWait.isZero() ? request.callerTimeout() : waitFor(request);
  }

  private void heardWait(String route, Instant started, int rounds, boolean served) {
    if (rounds > 0) {
      Duration waited = Duration.between(started, s.clock.instant());
      hear(new GuardEvent.Waited(route, waited, served));
    }
  }

  /** Tells the listener how a claim ended and how long its handler held it. */
  void ended(Claim claim, CompletionResult result) {
    if (s.listener == GuardSettings.NO_LISTENER) {
      return; // not even the clock is read for an event nobody hears, on every request
    }
    hear(new GuardEvent.Completed(claim.route(), result, Duration.between(claim.claimedAt(), s.clock.instant())));
  }

  /**
   * Tells the listener; what it throws is logged and ignored, an Error included, so that the
   * answer (stored already, or a replay) never changes: a metrics binder built against another
   * Micrometer throws NoSuchMethodError on every event. The JVM's own failure is passed on.
   */
  void hear(GuardEvent event) {
    try {
      s.listener.onEvent(event);
    } catch (RuntimeException | Error e) {
      if (FatalErrors.isFatal(e)) {
        throw e;
      }
      LOG.warn("A guard listener failed; ignored", e);
    }
  }

  String ownerToken() {
    return owners.next();
  }

  StoragePolicy storagePolicy(RoutePolicy policy) {
    return policy.storagePolicy() != null ? policy.storagePolicy() : s.storagePolicy;
  }

  Clock clock() {
    return s.clock;
  }

  /** Where this guard's transactional runs log their own failed steps, once per interval. */
  RateLimitedLog transactionFailures() {
    return transactionFailed;
  }

  Duration lease() {
    return s.lease;
  }

  CompletionSignals<RecordId> signals() {
    return signals;
  }

  /**
   * Checked whatever the storage policy says: a status HTTP cannot carry is the handler's failure,
   * not a response to release and send.
   */
  static void requireHttpStatus(int status) {
    if (status < 100 || status > 599) {
      throw new IllegalArgumentException("the handler answered " + status + ", which is no HTTP status (100..599)");
    }
  }

  /**
   * The response as the store keeps it: allowlisted headers, the URLs among them with their
   * credentials redacted, and no body past the capture cap.
   */
  StoredResponse toStored(CapturedResponse response) {
    Map<String, List<String>> kept = new LinkedHashMap<>();
    response.headers().forEach((name, values) -> {
      if (s.replayHeaders.contains(name)) { // case-insensitive: no lower-cased copy per header
        kept.put(name, storedValues(name, values));
      }
    });
    // A caller of complete() other than the bundled filters (another framework's, the test kit's)
    // hands the whole body: the cap is the guard's, so it is applied here too.
    if (response.overCap() || response.body().length > s.maxCapturedBody) {
      // No body is replayed, so nothing the body's headers describe: an empty body labelled gzip
      // is not even valid gzip.
      kept.keySet().removeIf(n -> n.equalsIgnoreCase("content-type") || n.equalsIgnoreCase(GuardSettings.CONTENT_ENCODING));
      return new StoredResponse(response.status(), kept, new byte[0], true);
    }
    return new StoredResponse(response.status(), kept, response.body(), false);
  }

  /**
   * {@code values} of the header {@code name} as the store keeps them: the URLs that
   * {@code Location}, {@code Content-Location}, {@code Link} and {@code Refresh} carry with their
   * credentials redacted ({@link RequestSnapshot#redactedHeaderValue}): a presigned URL's
   * signature, a servlet container's {@code ;jsessionid=} (encodeRedirectURL), user info or a
   * next-page link's token would otherwise be kept in clear, and sent to whoever retries with the
   * key. The live answer keeps the handler's own. Control characters are stored as spaces
   * ({@link StoredHeaderValue}). {@code values} itself where nothing is changed.
   */
  private static List<String> storedValues(String name, List<String> values) {
    List<String> out = null;
    for (int i = 0; i < values.size(); i++) {
      String v = values.get(i);
      String r = RequestSnapshot.redactedHeaderValue(name, StoredHeaderValue.of(v));
      if (r != v && out == null) {
        out = new ArrayList<>(values.subList(0, i));
      }
      if (out != null) {
        out.add(r);
      }
    }
    return out == null ? values : out;
  }

  private RoutePolicy policy(String method, String route) {
    RoutePolicy p = s.routes.isEmpty() ? null : s.routes.get(route);
    return p != null ? p : s.keyRequiredMethods.contains(method) ? s.keyedRoute : s.unkeyedRoute;
  }

  GuardResponse replay(StoredResponse stored) {
    Map<String, List<String>> h = new LinkedHashMap<>(stored.headers());
    if (stored.bodyOmitted()) {
      h.put(REPLAY_BODY_HEADER, List.of("omitted"));
    }
    if (s.replayMarker) {
      h.putAll(s.renderer.replayHeaders());
    }
    return new GuardResponse(stored.status(), h, stored.body());
  }

  GuardResponse reused() {
    return s.renderer.refusal(new Refusal(Refusal.Kind.KEY_REUSED, s.mismatchStatus, s.keyHeader,
        s.keyHeader + " reused with a different request",
        "This " + s.keyHeader + " was already used with a different request payload;"
            + " the key was reused, use a new key for a new operation.", null));
  }

  GuardResponse inFlight() {
    return s.renderer.refusal(new Refusal(Refusal.Kind.IN_FLIGHT, PROTOCOL.inFlightStatus(), s.keyHeader,
        "A request with this " + s.keyHeader + " is still being processed",
        "Retry after the first request has completed; the retry will get its result.", s.inFlightRetryAfter));
  }

  GuardResponse unavailable(String detail) {
    return s.renderer.refusal(new Refusal(Refusal.Kind.STORE_UNAVAILABLE, 503, s.keyHeader,
        "The idempotency store is unavailable", detail, Duration.ofSeconds(1)));
  }

  private static Admission respond(Admission.Reason reason, GuardResponse response) {
    return new Admission.Respond(reason, response);
  }

  /**
   * Settings for an {@link IdempotencyGuard}. Not thread-safe; build on one thread.
   */
  public static final class Builder {
    private final GuardSettings s = new GuardSettings();

    private Builder(IdempotencyStore store) {
      s.store = Objects.requireNonNull(store, "the guard's store is null; give one, such as"
          + " JdbcIdempotencyStore.sqlite(path) (one instance) or JdbcIdempotencyStore.postgres(dataSource) (a fleet)");
    }

    /**
     * The source of now for leases and retention. Default the system clock.
     *
     * @param clock the clock
     * @return this builder
     */
    public Builder clock(Clock clock) {
      s.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Times lease renewals and the purge job, and a waiting repeat's polls; its tasks never call the
     * store (that is the {@linkplain #storeExecutor store executor}'s), so they are short. Default:
     * a daemon thread the guard owns and stops on {@link IdempotencyGuard#close()}. Tests pass a
     * manual scheduler to make time explicit.
     *
     * @param scheduler the scheduler; the caller keeps ownership
     * @return this builder
     */
    public Builder scheduler(Scheduler scheduler) {
      s.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Runs the guard's background calls to the store: lease renewals and the purge. The
     * {@linkplain #scheduler scheduler} only times them and hands each call over, since a store
     * call can wait (a PostgreSQL round trip, a row lock, a pool's connection, a stalled network),
     * and on one thread a call that hung held back the renewal of every other claim until their
     * leases ran out and retries ran their handlers a second time.
     *
     * <p>Default: a pool of up to 4 daemon threads that the guard owns, started when needed, and
     * shuts down on {@link IdempotencyGuard#close()}, which waits up to 5 s for a call still
     * running and then interrupts it. Four, so that up to three hung calls leave the other claims
     * renewed; no more, since on PostgreSQL each running call holds a connection from the app's
     * pool. A claim has at most one renewal queued or running (the next is timed when it ends), so a
     * hung one holds one thread, not more; a claim that ends takes its queued renewal off the pool's
     * queue, or off an app's executor if it is a {@link java.util.concurrent.ThreadPoolExecutor}
     * (off any other it cannot, but what stays queued no longer holds the claim). A failed renewal is logged and tried again at the next turn; fencing in the store
     * keeps a renewal that runs after its claim ended from extending it.
     *
     * <p>Tests with a manual scheduler pass {@code Runnable::run}, to run the calls on the thread
     * that moves time. In production give an executor with several threads, or one hung call holds
     * back every renewal again.
     *
     * <p>Several guards may share one executor, to bound an app's store threads (and connections)
     * as a whole: the Spring Boot starter gives all of its guards one. Each guard's
     * {@link IdempotencyGuard#close()} leaves it running and waits for none of its calls.
     *
     * @param executor runs the store calls; the caller keeps ownership and shuts it down, after
     *     closing the guard (calls it runs after the close return at once)
     * @return this builder
     */
    public Builder storeExecutor(Executor executor) {
      s.storeExecutor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * The key header. Default {@value IdempotencyGuard#DEFAULT_KEY_HEADER}.
     *
     * @param name the header name, case-insensitive
     * @return this builder
     * @throws IllegalArgumentException if blank
     */
    public Builder keyHeader(String name) {
      Objects.requireNonNull(name, "the guard's keyHeader is null; give a header name, or leave it unset for the"
          + " default " + DEFAULT_KEY_HEADER);
      if (name.isBlank()) {
        throw new IllegalArgumentException("keyHeader must not be blank");
      }
      s.keyHeader = name;
      return this;
    }

    /**
     * What a key is unique within. Default {@link KeyScope#CALLER_AND_ROUTE}.
     *
     * @param scope the scope
     * @return this builder
     */
    public Builder scope(KeyScope scope) {
      s.scope = Objects.requireNonNull(scope, "scope");
      return this;
    }

    /**
     * The methods that get 400 without a key, on routes without their own policy. Default POST
     * and PATCH.
     *
     * @param methods method names, case-insensitive; may be empty
     * @return this builder
     */
    public Builder keyRequiredMethods(Set<String> methods) {
      Objects.requireNonNull(methods, "methods");
      s.keyRequiredMethods = methods.stream().map(m -> m.toUpperCase(Locale.ROOT)).collect(Collectors.toSet());
      return this;
    }

    /**
     * A policy for one route, such as a longer retention for {@code POST /payments}.
     *
     * @param method the HTTP method
     * @param path the raw path, exactly as requests spell it (no templates), without credential path
     *     parameters such as {@code ;jsessionid=} (the guard matches requests without them: {@link GuardRequest})
     * @param policy the route's settings
     * @return this builder
     */
    public Builder route(String method, String path, RoutePolicy policy) {
      Objects.requireNonNull(method, "method");
      Objects.requireNonNull(path, "path");
      s.routes.put(method.toUpperCase(Locale.ROOT) + " " + path, Objects.requireNonNull(policy, "policy"));
      return this;
    }

    /**
     * How long a completed result is kept, counted from completion. Default 24 hours. After it
     * the key is new again: a repeat runs the handler again.
     *
     * @param retention positive
     * @return this builder
     * @throws IllegalArgumentException if not positive
     */
    public Builder retention(Duration retention) {
      s.retention = positive(retention, "retention");
      return this;
    }

    /**
     * The lease of a claim, renewed every third of it while the handler runs. Default 30 s.
     *
     * @param lease at least 3 ms
     * @return this builder
     * @throws IllegalArgumentException if shorter than 3 ms
     */
    public Builder lease(Duration lease) {
      positive(lease, "lease");
      if (lease.toMillis() < 3) {
        throw new IllegalArgumentException("lease must be at least 3 ms: " + lease);
      }
      s.lease = lease;
      return this;
    }

    /**
     * The {@code Retry-After} on a 409 for a key in flight, rounded up to whole seconds. Default
     * 1 s; null sends no {@code Retry-After}, as some servers do.
     *
     * @param retryAfter zero or positive, or null for none
     * @return this builder
     * @throws IllegalArgumentException if negative
     */
    public Builder inFlightRetryAfter(Duration retryAfter) {
      if (retryAfter != null && retryAfter.isNegative()) {
        throw new IllegalArgumentException("retryAfter must not be negative: " + retryAfter);
      }
      s.inFlightRetryAfter = retryAfter;
      return this;
    }

    /**
     * The status for a key reused with another payload. Default 422 (the IETF draft); some
     * servers answer 417 or 409.
     *
     * @param status 400..499
     * @return this builder
     * @throws IllegalArgumentException if not a 4xx
     */
    public Builder mismatchStatus(int status) {
      if (status < 400 || status > 499) {
        throw new IllegalArgumentException("the mismatch status is a 4xx, not " + status);
      }
      s.mismatchStatus = status;
      return this;
    }

    /**
     * Whether replays carry {@value IdempotencyGuard#REPLAYED_HEADER}{@code : true}. Default true.
     *
     * @param on false to send replays unmarked
     * @return this builder
     */
    public Builder replayMarker(boolean on) {
      s.replayMarker = on;
      return this;
    }

    /**
     * Which results are stored. Default {@link StoragePolicy#STORE_ALL_BUT_TRANSIENT} (408, 425, 429
     * and 503 release the claim): a 500 is stored,
     * since the handler may have committed its effect before it; a route may differ
     * ({@link RoutePolicy#storing}).
     *
     * @param policy the policy
     * @return this builder
     */
    public Builder storagePolicy(StoragePolicy policy) {
      s.storagePolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * How bodies are fingerprinted. Default {@link FingerprintMode#CANONICAL_JSON}.
     *
     * @param mode the mode
     * @return this builder
     */
    public Builder fingerprintMode(FingerprintMode mode) {
      s.fingerprintMode = Objects.requireNonNull(mode, "mode");
      return this;
    }

    /**
     * The longest request body of a keyed request, in bytes; longer ones get 413 and claim
     * nothing. Default 1 MiB. The guard holds the body in memory to fingerprint it.
     *
     * @param bytes 0 or more, below {@link Integer#MAX_VALUE}
     * @return this builder
     * @throws IllegalArgumentException if out of range
     */
    public Builder maxRequestBody(int bytes) {
      if (bytes < 0 || bytes == Integer.MAX_VALUE) {
        throw new IllegalArgumentException("maxRequestBody out of range: " + bytes);
      }
      s.maxRequestBody = bytes;
      return this;
    }

    /**
     * The longest response body stored for replay, in bytes. Default 1 MiB. A longer one is
     * sent but not stored; see the class documentation for what its replay sends.
     *
     * @param bytes 0 or more
     * @return this builder
     * @throws IllegalArgumentException if negative
     */
    public Builder maxCapturedBody(int bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("maxCapturedBody must not be negative: " + bytes);
      }
      s.maxCapturedBody = bytes;
      return this;
    }

    /**
     * The response headers stored and replayed. Default {@code Content-Type}, {@code Content-Language},
     * {@code Content-Location}, {@code Location}, {@code ETag}, {@code Last-Modified}. Secret
     * headers are never stored, even if listed; a stored {@code Location} or
     * {@code Content-Location}, and a {@code Link} or {@code Refresh} if listed, has the credentials
     * in its URLs and their fragments redacted ({@code RequestSnapshot.redactedHeaderValue}), so a
     * replay carries the redacted URLs. {@code Content-Encoding} is stored and replayed with
     * the body whatever this list says, since it tells how the stored bytes are coded (a replay
     * without it sends gzip bytes no client can read); a replay without a body (over the capture
     * cap) sends neither it nor {@code Content-Type}. {@code Retry-After} is stored and replayed
     * whenever the answer carries it, since it qualifies the stored status (a 503 or 429 that
     * {@link StoragePolicy#STORE_ALL} keeps).
     *
     * @param names header names, case-insensitive
     * @return this builder
     */
    public Builder replayHeaders(Set<String> names) {
      s.replayHeaders = lower(names);
      return this;
    }

    /**
     * Headers never stored, whatever the allowlist says, besides those the client's rule calls
     * secret ({@link RequestSnapshot#isSecretByDefault(String)}: {@code Authorization},
     * {@code Proxy-Authorization}, {@code DPoP}, {@code Cookie}, {@code Set-Cookie}, and any name containing
     * {@code token}, {@code secret}, {@code auth}, {@code session}..., and any name ending in
     * {@code -key} but an idempotency key's). The names given here are
     * added to those.
     *
     * @param names more header names, case-insensitive
     * @return this builder
     */
    public Builder secretHeaders(Set<String> names) {
      Set<String> all = new java.util.HashSet<>(RequestSnapshot.DEFAULT_SECRET_HEADERS);
      all.addAll(lower(names));
      s.secretHeaders = Set.copyOf(all);
      return this;
    }

    /**
     * How often the guard purges records past retention. Default 10 minutes; null for never
     * (call {@link IdempotencyGuard#purgeExpired()} yourself).
     *
     * @param interval positive, or null
     * @return this builder
     * @throws IllegalArgumentException if not positive
     */
    public Builder purgeInterval(Duration interval) {
      s.purgeInterval = interval == null ? null : positive(interval, "purgeInterval");
      return this;
    }

    /**
     * Shapes the guard's refusals and the replay marker for the API's clients. Default
     * {@link GuardRenderer#problemJson()}; {@link GuardRenderer#stripe()} for clients written for
     * Stripe.
     *
     * @param renderer the renderer
     * @return this builder
     */
    public Builder renderer(GuardRenderer renderer) {
      s.renderer = Objects.requireNonNull(renderer, "renderer");
      return this;
    }

    /**
     * Hears the guard's {@link GuardEvent}s (conflicts, mismatches, takeovers, waits, replays, how
     * claims ended, purges), for metrics ({@code dev.idem.server.metrics.MicrometerGuardMetrics})
     * and logs; several at once with {@link GuardListener#all}. Default {@link GuardListener#none()}.
     * What it throws, an Error included, is logged and never changes the guard's answer; only the
     * JVM's own failure (a VirtualMachineError other than StackOverflowError) is passed on.
     *
     * @param listener the listener; thread-safe and quick
     * @return this builder
     */
    public Builder listener(GuardListener listener) {
      s.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * How long a repeat that finds its key in flight waits for the first request's result before
     * it is answered 409 (seed 000's "wait briefly, within the caller's remaining time"). Within
     * the wait it gets the replay as soon as the first request completes (at once when this
     * process completes it, otherwise at its next poll of the store: 25 ms, then doubling up to
     * 1 s), or runs the handler itself if the first request failed. The wait never exceeds the
     * caller's stated timeout ({@link #requestTimeoutHeader}). Default zero: 409 at once. A
     * waiting repeat holds its request thread: keep the wait to a few seconds.
     *
     * <p>In transactional mode the wait bounds PostgreSQL's lock wait for the first request's
     * transaction; zero leaves that wait to the database.
     *
     * @param wait zero to 5 minutes
     * @return this builder
     * @throws IllegalArgumentException if negative or over 5 minutes
     */
    public Builder inFlightWait(Duration wait) {
      Objects.requireNonNull(wait, "wait");
      if (wait.isNegative() || wait.compareTo(Duration.ofMinutes(5)) > 0) {
        throw new IllegalArgumentException("inFlightWait must be zero to 5 minutes: " + wait);
      }
      s.inFlightWait = wait;
      return this;
    }

    /**
     * A request header in which callers state how long they wait for an answer, in milliseconds
     * (as Envoy's {@code x-envoy-expected-rq-timeout-ms} does); the adapters read it, and the
     * guard's {@linkplain #inFlightWait wait} for a first request never outlasts it. Default none.
     *
     * @param name the header name, case-insensitive; null for none
     * @return this builder
     * @throws IllegalArgumentException if blank
     */
    public Builder requestTimeoutHeader(String name) {
      if (name != null && name.isBlank()) {
        throw new IllegalArgumentException("requestTimeoutHeader must not be blank");
      }
      s.requestTimeoutHeader = name;
      return this;
    }

    /**
     * The identity of this instance, stable across its restarts and unique among the instances
     * sharing a store: a pod name in a StatefulSet, a host name. Claims are made under it, and at
     * {@link #build()} the claims it left in flight are known dead (this instance is starting, so
     * its earlier run is over): their leases end at once, and a retry of each runs without waiting
     * out the lease. Two live instances must never share an identity, or one would end the other's
     * live claims. Default none: a random identity per guard, and dead claims wait out their lease.
     * (An embedded SQLite store needs none: it ends every dead claim when it opens.)
     *
     * @param id 1 to 100 characters: letters, digits, {@code . _ : -}
     * @return this builder
     * @throws IllegalArgumentException if malformed
     */
    public Builder instanceId(String id) {
      Objects.requireNonNull(id, "id");
      if (!OwnerTokens.isValidInstanceId(id)) {
        throw new IllegalArgumentException("instanceId must be 1 to 100 letters, digits, '.', '_', ':' or '-': " + id);
      }
      s.instanceId = id;
      return this;
    }

    /**
     * Builds the guard, and starts its purge job. With an {@link #instanceId}, first ends the
     * leases of the claims that identity left in flight.
     *
     * @return the guard
     * @throws IdempotencyStoreException if the store failed while ending those leases
     */
    public IdempotencyGuard build() {
      return new IdempotencyGuard(s.frozen());
    }

    private static Set<String> lower(Set<String> names) {
      return Objects.requireNonNull(names, "names").stream()
          .map(n -> Objects.requireNonNull(n, "name").toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
    }

    private static Duration positive(Duration d, String name) {
      Objects.requireNonNull(d, () -> "the guard's " + name + " is null; give a positive Duration, or leave it unset"
          + " for the default");
      if (d.isZero() || d.isNegative()) {
        throw new IllegalArgumentException(name + " must be positive: " + d);
      }
      return d;
    }
  }
}
