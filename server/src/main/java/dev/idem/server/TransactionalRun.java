package dev.idem.server;

import dev.idem.server.internal.RateLimitedLog;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.CompletionResult;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.idem.storage.Dialect;
import dev.idem.storage.SqlSession;

/**
 * Transactional mode, one request: claim, handler and result in the app's transaction. Either the
 * guard owns the transaction (begins, commits, rolls back) or it works inside a caller's, within a
 * savepoint. See {@link IdempotencyGuard#inTransaction} for the contract.
 */
final class TransactionalRun {
  private static final Logger LOG = LoggerFactory.getLogger(TransactionalRun.class);
  // Reads the setting and sets the new one in one round trip; OFFSET 0 keeps the subquery (the
  // old value) from being folded into the same projection as the set.
  private static final String SET_LOCK_TIMEOUT = "SELECT p.prev, set_config('lock_timeout', ?, true)"
      + " FROM (SELECT current_setting('lock_timeout') AS prev OFFSET 0) p";

  private final IdempotencyGuard guard;
  private final Connection c;
  private final boolean owned;
  private final Dialect dialect;
  private Savepoint savepoint;
  /** Whether a step of the guard's failed (answered 503), for the guard's log of such failures. */
  private boolean stepFailed;

  private TransactionalRun(IdempotencyGuard guard, Connection c, boolean owned, Dialect dialect) {
    this.guard = guard;
    this.c = c;
    this.owned = owned;
    this.dialect = dialect;
  }

  /**
   * The guard's log of failed transactional steps: a database that is down fails every request's,
   * logged once per interval with the first one's stack trace (the step is in the failure's message).
   */
  static RateLimitedLog failureLog(Clock clock) {
    return new RateLimitedLog(LOG, "Transactional step failed and was rolled back; answering 503",
        RateLimitedLog.DEFAULT_INTERVAL, clock);
  }

  static GuardResponse run(IdempotencyGuard guard, Connection c, GuardRequest request, TransactionalHandler handler,
      boolean owned) throws IOException, SQLException {
    Objects.requireNonNull(handler, "handler");
    if (!(guard.store() instanceof JdbcIdempotencyStore store)) {
      throw new IllegalStateException("transactional mode needs the guard's records in the app's database:"
          + " build the guard on a JdbcIdempotencyStore over that database, not " + guard.store().getClass().getName());
    }
    boolean autoCommit = c.getAutoCommit();
    if (!owned && autoCommit) {
      throw new IllegalStateException("joinTransaction needs a connection in a transaction (auto-commit off);"
          + " use inTransaction to let the guard run the transaction");
    }
    // Before the app's connection writes here: an app's commit between the embedded store's commit
    // and its sync could leave, after a power loss, a torn frame of the store's under the app's
    // intact commit, which the store's check at open refuses as damage.
    store.expectOtherWriters();
    IdempotencyGuard.Prepared p = guard.prepare(request);
    if (p.answer() instanceof Admission.Respond r) {
      return r.response();
    }
    TransactionalRun run = new TransactionalRun(guard, c, owned, store.dialect());
    if (owned && autoCommit) {
      c.setAutoCommit(false);
    }
    try {
      if (p.answer() instanceof Admission.Unguarded) {
        byte[] body = request.body().read(guard.maxRequestBody() + 1);
        if (body.length > guard.maxRequestBody()) {
          return ((Admission.Respond) guard.tooLarge()).response();
        }
        return run.reported(run.unguarded(handler, body));
      }
      return run.reported(run.guarded(p, request, handler));
    } catch (Throwable t) {
      // Restoring auto-commit below commits whatever is still open: a failure that no step rolled
      // back would commit the handler's writes with an IN_FLIGHT claim and no result.
      if (owned) {
        run.undoQuietly(t);
      }
      throw t;
    } finally {
      if (owned && autoCommit) {
        try {
          c.setAutoCommit(true);
        } catch (SQLException e) {
          LOG.warn("Could not restore auto-commit on the app's connection", e);
        }
      }
    }
  }

  /** Tells the guard's log whether this run's steps reached the database, on an owned transaction. */
  private GuardResponse reported(GuardResponse response) {
    if (owned && !stepFailed) {
      guard.transactionFailures().succeeded();
    }
    return response;
  }

  private GuardResponse unguarded(TransactionalHandler handler, byte[] body) throws SQLException {
    begin();
    CapturedResponse response = handle(handler, null, body);
    if (owned) {
      try {
        c.commit();
      } catch (SQLException e) {
        undoQuietly(e);
        return storeFailed("commit", e);
      }
    }
    return toSend(response);
  }

  private GuardResponse guarded(IdempotencyGuard.Prepared p, GuardRequest request, TransactionalHandler handler)
      throws SQLException {
    return guarded(p, request, handler, Legacy.MAY_TAKE_OVER);
  }

  /** Where a claim stands with a lapsed claim stored under the query as written (see below). */
  private enum Legacy {
    /** Not met yet: such a claim may be taken over under its own fingerprint. */
    MAY_TAKE_OVER,
    /** This is the claim under the fingerprint such a claim was stored with. */
    TAKING_OVER,
    /** Done with: claims under the request's own fingerprint only. */
    DONE
  }

  private GuardResponse guarded(IdempotencyGuard.Prepared p, GuardRequest request, TransactionalHandler handler,
      Legacy legacy) throws SQLException {
    Instant now = guard.clock().instant();
    String owner = guard.ownerToken();
    ClaimAttempt attempt;
    try {
      begin();
      String previous = null;
      Duration wait = dialect == Dialect.POSTGRESQL ? guard.lockWait(request) : null;
      if (wait != null) {
        previous = setLockTimeout(Long.toString(Math.max(1, wait.toMillis())));
      }
      attempt = JdbcIdempotencyStore.claimOn(SqlSession.uncached(c), p.id(), p.fingerprint(), owner, now,
          now.plus(guard.lease()), now.plus(p.policy().retention()));
      if (previous != null) {
        setLockTimeout(previous);
      }
    } catch (SQLException e) {
      undoQuietly(e);
      if (dialect == Dialect.POSTGRESQL && dialect.isLockWaitOver(e)) {
        // Another transaction holds this key and did not finish within the wait.
        guard.hear(new GuardEvent.Conflict(p.route()));
        return guard.inFlight();
      }
      return storeFailed("claim", e);
    }
    if (!(attempt instanceof ClaimAttempt.Claimed claimed)) {
      try {
        undo();
      } catch (SQLException e) {
        return storeFailed("claim", e);
      }
      if (attempt instanceof ClaimAttempt.Existing e && !p.sameRequest(e.record().fingerprint())) {
        guard.hear(new GuardEvent.Mismatch(p.route()));
        return guard.reused();
      }
      if (attempt instanceof ClaimAttempt.Existing e && e.record().state() == RecordState.COMPLETED
          && e.record().response().isPresent()) {
        guard.hear(new GuardEvent.Replayed(p.route()));
        return guard.replay(e.record().response().get());
      }
      if (attempt instanceof ClaimAttempt.Existing e && legacy == Legacy.MAY_TAKE_OVER
          && e.record().state() == RecordState.IN_FLIGHT
          && !e.record().fingerprint().equals(p.fingerprint()) && !e.record().leaseUntil().isAfter(now)) {
        // A lapsed lease-mode claim stored before credential parameters were left out of the
        // fingerprint: taken over under its own fingerprint, which the takeover compares (as in
        // lease mode), or every retry was answered 409 for the record's whole retention.
        return guarded(p.storedAs(e.record().fingerprint()), request, handler, Legacy.TAKING_OVER);
      }
      // A claim in flight outside transactional mode (a lease-mode run of the same operation).
      guard.hear(new GuardEvent.Conflict(p.route()));
      return guard.inFlight();
    }
    if (legacy == Legacy.TAKING_OVER && !claimed.tookOver()) {
      // Claimed under the old fingerprint, but not the lapsed claim it was read as (released or
      // purged meanwhile): rolled back, and claimed again under the request's own, or the operation
      // would be stored for its retention under the old one.
      try {
        undo();
      } catch (SQLException e) {
        return storeFailed("claim", e);
      }
      return guarded(p.storedAs(p.asWritten()), request, handler, Legacy.DONE);
    }
    if (claimed.tookOver()) {
      guard.hear(new GuardEvent.Takeover(p.route()));
    }
    Claim claim = new Claim(p, now, claimed.generation(), owner, guard.storagePolicy(p.policy()));
    claim.finish(); // no lease to renew: nobody sees the claim before the commit
    try {
      return complete(p, claim, handler);
    } finally {
      // A lease-mode request of this process may be waiting on the same operation.
      guard.signals().signal(p.id());
    }
  }

  private GuardResponse complete(IdempotencyGuard.Prepared p, Claim claim, TransactionalHandler handler)
      throws SQLException {
    CapturedResponse response = handle(handler, claim, p.body());
    try {
      IdempotencyGuard.requireHttpStatus(response.status());
      if (!claim.storagePolicy().stores(response.status())) {
        // Released: the claim and the handler's writes go together, so a retry finds nothing done.
        undo();
        guard.ended(claim, CompletionResult.RELEASED);
        return toSend(response);
      }
      CapturedResponse kept = response.body() != null && response.body().length > guard.maxCapturedBody()
          ? new CapturedResponse(response.status(), response.headers(), null) : response;
      Instant done = guard.clock().instant();
      if (!JdbcIdempotencyStore.storeResultOn(c, p.id(), claim.generation(), claim.owner(), guard.toStored(kept),
          done.plus(p.policy().retention()))) {
        throw new SQLException("the claim made in this transaction is gone");
      }
      if (owned) {
        c.commit();
      }
    } catch (SQLException e) {
      undoQuietly(e);
      return storeFailed("result", e);
    } catch (RuntimeException | Error e) {
      // Not the store's failure (a response it cannot keep): the handler's writes go with the claim.
      undoQuietly(e);
      throw e;
    }
    guard.ended(claim, CompletionResult.STORED);
    return toSend(response);
  }

  private CapturedResponse handle(TransactionalHandler handler, Claim claim, byte[] body) throws SQLException {
    try {
      return Objects.requireNonNull(handler.handle(c, claim, body), "the transactional handler returned no response");
    } catch (SQLException | RuntimeException | Error e) {
      undoQuietly(e);
      throw e;
    }
  }

  private void begin() throws SQLException {
    if (!owned) {
      savepoint = c.setSavepoint();
    }
  }

  /** Rolls back what this run did: the whole transaction it owns, or to its savepoint. */
  private void undo() throws SQLException {
    if (owned) {
      c.rollback();
    } else if (savepoint != null) {
      c.rollback(savepoint);
    }
  }

  private void undoQuietly(Throwable cause) {
    try {
      undo();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  /**
   * The guard's own step failed and was rolled back. Owning the transaction, the guard answers 503:
   * either it committed (a retry gets the replay) or nothing did. Inside a caller's transaction,
   * the caller must roll back, so it is told.
   */
  private GuardResponse storeFailed(String step, SQLException e) {
    if (!owned) {
      throw new IdempotencyStoreException("transactional " + step + " failed: " + e.getMessage(), e);
    }
    stepFailed = true;
    LOG.debug("Transactional {} failed and was rolled back; answering 503", step, e);
    // Wrapped to name the step, in the stack trace and in the latest failure of a summary line.
    guard.transactionFailures().failed(new IdempotencyStoreException("transactional " + step + " failed: "
        + e.getMessage(), e));
    return guard.unavailable("The request was not completed, or its result could not be confirmed; retry: the"
        + " retry gets the stored result if there is one.");
  }

  private String setLockTimeout(String value) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SET_LOCK_TIMEOUT)) {
      ps.setString(1, value);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  private static GuardResponse toSend(CapturedResponse r) {
    return new GuardResponse(r.status(), r.headers(), r.body() == null ? new byte[0] : r.body());
  }
}
