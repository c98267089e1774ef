package dev.idem.core;

import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.StaleOwnerException;
import dev.idem.core.spi.Transition;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * A {@link Journal} in memory. Everything is lost when the process ends, so it keeps keys stable
 * across retries but not across restarts: use the persistence module's journal for that.
 *
 * <p>Thread-safe: every method holds one lock, which is fine for tests and modest loads.
 */
public final class InMemoryJournal implements Journal {
  /** The reason of the AMBIGUOUS attempt recorded when a claim takes over an expired lease. */
  public static final String TAKEOVER_REASON =
      "the process that held this attempt stopped while it may have been in flight";
  /** Orders identities the way {@link #findDue} pages through them. */
  static final Comparator<OperationId> ORDER = Comparator.comparing(OperationId::scope)
      .thenComparing(OperationId::operation)
      .thenComparing(id -> id.key().value());

  private final TreeMap<OperationId, OperationRecord> records = new TreeMap<>(ORDER);
  private boolean closed;

  @Override
  public synchronized BeginResult begin(NewOperation operation) throws IdempotencyException {
    ensureOpen();
    OperationRecord existing = records.get(operation.id());
    if (existing != null) {
      if (!existing.fingerprint().equals(operation.fingerprint())) {
        throw new IdempotencyKeyReusedException(operation.id(), false,
            "key " + operation.id().key() + " is already journaled for " + operation.id().scope() + "/"
                + operation.id().operation() + " with another request fingerprint; refusing to send");
      }
      return new BeginResult(existing, false);
    }
    OperationRecord created = OperationRecord.pending(operation);
    records.put(operation.id(), created);
    return new BeginResult(created, true);
  }

  @Override
  public synchronized Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
    ensureOpen();
    return Optional.ofNullable(records.get(id));
  }

  @Override
  public synchronized List<OperationRecord> findByReference(String scope, String reference)
      throws IdempotencyException {
    ensureOpen();
    return records.values().stream()
        .filter(r -> r.id().scope().equals(scope) && reference.equals(r.reference()))
        .sorted(Comparator.comparing(OperationRecord::createdAt))
        .toList();
  }

  @Override
  public synchronized Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    ensureOpen();
    OperationRecord r = records.get(id);
    if (r == null) {
      throw new IllegalStateException("no such operation: " + id);
    }
    // An expired lease, or the claimant's own: a restarted instance under a stable owner name takes
    // back what its previous incarnation held (within one process, SingleFlight keeps executions of
    // one operation from overlapping).
    boolean claimable = r.state() == OperationState.PENDING
        || (r.state() == OperationState.IN_FLIGHT && (!r.isLeasedAt(now) || owner.equals(r.owner())));
    if (!claimable) {
      return Optional.empty();
    }
    OperationState.checkTransition(r.state(), OperationState.IN_FLIGHT);
    if (r.state() == OperationState.IN_FLIGHT) {
      r = takeOver(r, now);
    }
    Lease lease = new Lease(owner, r.generation() + 1, now.plus(leaseFor));
    records.put(id, r.with(OperationState.IN_FLIGHT, owner, lease.generation(), lease.expiresAt(), null, now,
        null, null));
    return Optional.of(lease);
  }

  /**
   * An expired lease's holder may have sent the attempt of its generation and died: unless that
   * attempt was recorded, it counts as AMBIGUOUS, so that giving up later ends UNCERTAIN (the same
   * rule as the JDBC journal's).
   */
  private static OperationRecord takeOver(OperationRecord r, Instant now) {
    if (r.attempts().stream().anyMatch(a -> a.generation() == r.generation())) {
      return r;
    }
    return r.withAttempt(new AttemptRecord(r.attempts().size() + 1, r.generation(), now, now,
        Classification.AMBIGUOUS, null, null, TAKEOVER_REASON, Duration.ZERO, "recovered: resend with the same key"),
        now);
  }

  @Override
  public synchronized void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt)
      throws IdempotencyException {
    OperationRecord r = fenced(id, lease);
    records.put(id, r.withAttempt(attempt, attempt.endedAt()));
  }

  @Override
  public synchronized OperationRecord transition(OperationId id, Lease lease, Transition t)
      throws IdempotencyException {
    OperationRecord r = fenced(id, lease);
    OperationState.checkTransition(r.state(), t.target());
    OperationRecord updated = r.with(t.target(), r.owner(), r.generation(), null, t.nextAttemptAt(), t.at(),
        t.response(), t.reason());
    records.put(id, updated);
    return updated;
  }

  @Override
  public synchronized OperationRecord abandon(OperationId id, Transition t) throws IdempotencyException {
    OperationRecord r = existing(id);
    OperationState.checkAbandon(r.state(), t.target());
    OperationRecord updated = r.with(t.target(), r.owner(), r.generation(), null, t.nextAttemptAt(), t.at(),
        t.response(), t.reason());
    records.put(id, updated);
    return updated;
  }

  @Override
  public synchronized OperationRecord redrive(OperationId id, Instant now) throws IdempotencyException {
    OperationRecord r = existing(id);
    OperationState.checkRedrive(r.state());
    OperationRecord updated = r.with(OperationState.PENDING, r.owner(), r.generation(), null, null, now, null,
        "re-driven from " + r.state());
    records.put(id, updated);
    return updated;
  }

  @Override
  public synchronized List<OperationRecord> findDue(Instant now, OperationId after, int limit)
      throws IdempotencyException {
    return page(after, limit, r -> (r.state() == OperationState.PENDING
        && (r.nextAttemptAt() == null || !r.nextAttemptAt().isAfter(now)))
        || (r.state() == OperationState.IN_FLIGHT && !r.isLeasedAt(now)));
  }

  @Override
  public synchronized List<OperationRecord> findByState(OperationState state, OperationId after, int limit)
      throws IdempotencyException {
    return page(after, limit, r -> r.state() == state);
  }

  private List<OperationRecord> page(OperationId after, int limit, Predicate<OperationRecord> filter)
      throws IdempotencyException {
    ensureOpen();
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1: " + limit);
    }
    Map<OperationId, OperationRecord> tail = after == null ? records : records.tailMap(after, false);
    return tail.values().stream().filter(filter).limit(limit).toList();
  }

  @Override
  public synchronized int purge(Instant before) throws IdempotencyException {
    ensureOpen();
    Map<OperationId, OperationRecord> doomed = new HashMap<>();
    records.forEach((id, r) -> {
      if (r.state().isTerminal() && r.updatedAt().isBefore(before)) {
        doomed.put(id, r);
      }
    });
    doomed.keySet().forEach(records::remove);
    return doomed.size();
  }

  @Override
  public synchronized void close() {
    closed = true;
  }

  private OperationRecord existing(OperationId id) throws IdempotencyException {
    ensureOpen();
    OperationRecord r = records.get(id);
    if (r == null) {
      throw new IllegalStateException("no such operation: " + id);
    }
    return r;
  }

  private OperationRecord fenced(OperationId id, Lease lease) throws IdempotencyException {
    OperationRecord r = existing(id);
    if (r.state() != OperationState.IN_FLIGHT || r.generation() != lease.generation()
        || !lease.owner().equals(r.owner())) {
      throw new StaleOwnerException(id, lease, r.state() + " at generation " + r.generation());
    }
    return r;
  }

  private void ensureOpen() throws JournalException {
    if (closed) {
      throw new JournalException("journal is closed", null);
    }
  }
}
