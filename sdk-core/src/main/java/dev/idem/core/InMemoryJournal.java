package dev.idem.core;

import dev.idem.core.internal.Checks;
import dev.idem.core.internal.DueRule;
import dev.idem.core.internal.PackedRecord;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.StaleOwnerException;
import dev.idem.core.spi.Transition;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * A {@link Journal} in memory. Everything is lost when the process ends, so it keeps keys stable
 * across retries but not across restarts: use the persistence module's journal for that.
 *
 * <p>It stores the snapshots it is handed as they are. Through an executor they hold no secret:
 * the executor's rule ran first, including
 * {@link dev.idem.core.spi.RequestSnapshot#DEFAULT_SECRET_HEADERS}, which it never lets an app
 * allow. It strips nothing itself, unlike {@code JdbcJournal}, because it never leaves the process
 * and a check here would cost every call of the executor's default journal a second walk of the
 * headers the executor has just walked.
 *
 * <p>Thread-safe, without one global lock: each operation has its own slot, and every change to an
 * operation happens under that slot's lock only, so callers working on different operations never
 * wait for each other (a single monitor for the whole journal was a quarter of the lock waits of
 * 32 concurrent callers). Each method is atomic for the operation it touches; the listing methods
 * ({@link #findDue}, {@link #findByState}, {@link #findByReference}, {@link #purge}) read each
 * operation's latest record without stopping changes to the others.
 *
 * <p>Memory is bounded. The operations still in progress (PENDING, IN_FLIGHT) and the finished
 * ones whose outcome is still owed to a handler ({@link OperationRecord#outcomeUndelivered}) are
 * always kept: they are work not yet done. The other finished operations are kept up to an
 * estimated {@linkplain #InMemoryJournal(long) size} (default
 * {@value #DEFAULT_MAX_FINISHED_BYTES} bytes, 16 MiB: some 24,000 keyed POSTs of 90 bytes of body,
 * fewer with larger bodies or headers), and past it the ones that finished first are dropped, as a
 * {@link #purge} would drop them: the SUCCEEDED and FAILED ones first, the UNCERTAIN ones only once
 * none of those is left, since they await reconciliation
 * ({@link IdempotentExecutor#reconcileUncertain}). A re-driven operation that finishes again, or an
 * UNCERTAIN one that reconciliation settles, counts as finished then. Without that bound, a process
 * that never purged (nothing purges this journal by itself) kept every operation it ever ran, until
 * it ran out of memory. A dropped
 * operation is forgotten as after a restart: {@link #find} no longer returns it, and a new call with its key
 * begins it again and sends it with that same key, which the server recognises within its key
 * retention.
 *
 * <p>A finished operation that may be dropped is kept packed into one byte array (its record is
 * rebuilt, equal, when it is read again): about 690 bytes and 10 objects for a keyed POST of 90
 * bytes, against 1,120 bytes and some 45 objects as a record. At thousands of calls a second the
 * operations it keeps live long enough for young collections to copy them, several times each;
 * packed, they are less to copy (the collector's pauses in the end-to-end benchmark's default row
 * came to 2.0 to 2.7 µs a call against 3.3 to 3.8 unpacked), for about a microsecond of packing
 * per call.
 */
public final class InMemoryJournal implements Journal {
  /**
   * The finished operations' size {@link #InMemoryJournal()} keeps, estimated: 16 MiB, about as many
   * operations as 32 MiB held before they were kept packed (some 24,000 keyed POSTs of 90 bytes).
   */
  public static final long DEFAULT_MAX_FINISHED_BYTES = 16L * 1024 * 1024;
  /**
   * What a kept operation costs beyond its packed record and its key's characters: the identity,
   * the slot, the map and queue entries, the key's objects and the array's header. The live heap of
   * this journal holding 20,000 finished keyed POSTs through the OkHttp adapter (36-character keys)
   * came to 686 bytes an operation, of which 432 were the packed records.
   */
  private static final long SLOT_BYTES = 220;
  /**
   * How many more identities than the journal holds operations {@link #begun} may hold before a
   * dropping caller trims it (see {@link #trimBegun}).
   */
  private static final int BEGUN_SLACK = 4_096;

  /** Orders identities the way {@link #findDue} pages through them. */
  static final Comparator<OperationId> ORDER = InMemoryJournal::compare;

  /**
   * Scope, then operation name, then key. Every begin inserts into the ordered index, at about 20
   * comparisons a call once the journal holds a million operations; scopes and operation names are
   * usually the same String instances (constants), which the identity checks skip comparing.
   */
  private static int compare(OperationId a, OperationId b) {
    String x = a.scope();
    String y = b.scope();
    int c = x == y ? 0 : x.compareTo(y);
    if (c != 0) {
      return c;
    }
    x = a.operation();
    y = b.operation();
    c = x == y ? 0 : x.compareTo(y);
    return c != 0 ? c : a.key().value().compareTo(b.key().value());
  }

  /**
   * One operation: its latest record, replaced (never mutated) under the slot's lock. A finished
   * operation the journal may drop is kept {@linkplain PackedRecord packed}: one array instead of
   * some 45 objects for every young collection to copy again while the journal keeps it.
   */
  private static final class Slot {
    /** The latest record, or null while it is {@link #packed}; under the lock. */
    OperationRecord record;
    /** The latest record packed, or null; under the lock. */
    byte[] packed;
    /** The state of the {@link #packed} record, read by a listing instead of unpacking it; under the lock. */
    OperationState packedState;
    /**
     * Set, under the lock, when purge or the size bound took the slot out of the map: it then
     * holds no operation. Volatile for purge's sweep of {@code finished}, which reads it without
     * the lock.
     */
    volatile boolean removed;
    /**
     * What this operation counts in {@code finishedBytes} while it may be dropped, else 0; under
     * the lock.
     */
    long weight;
    /**
     * Its latest place in {@code finished} or {@code uncertain}: the slot itself the first time it
     * may be dropped, a {@link Place} each time after (a re-driven operation that finishes again
     * has finished last), null before; under the lock. An entry polled that is not the latest is
     * passed over.
     */
    Object place;
    /** Whether {@link #place} is in {@code uncertain} rather than {@code finished}; under the lock. */
    boolean placeUncertain;
    /** Whether its identity was moved into {@code order}; under the lock. */
    boolean ordered;
    /** Its place in {@code begun}, told when the slot leaves the journal. */
    final Begun begun;

    Slot(OperationRecord record) {
      this.record = record;
      this.begun = new Begun(record.id());
    }

    /** The latest record, unpacked if need be; under the lock. */
    OperationRecord record() {
      OperationRecord r = record;
      return r != null ? r : PackedRecord.unpack(begun.id, packed);
    }
  }

  /**
   * A place in the drop order of a slot that may be dropped again: re-driven, it finished again.
   * Its first place is the slot itself, so that the usual finish makes no object for it.
   */
  private static final class Place {
    final Slot slot;

    Place(Slot slot) {
      this.slot = slot;
    }
  }

  private static Slot slotOf(Object place) {
    return place instanceof Slot s ? s : ((Place) place).slot;
  }

  /**
   * An identity waiting in {@link #begun}, and whether its slot has left the journal since. Trimming
   * reads the mark instead of looking the identity up: the entries it takes are thousands of
   * operations old, and the look-up's hash of the key and probe of a table of every operation were
   * cache misses, while the entry is usually the one the same call's drop has just marked. The
   * journal calls of a successful operation in a full default journal went from 3.19 and 3.12
   * times a bare map's insert and removal to 2.80 and 2.59 ({@code InMemoryJournalBenchmark},
   * alternated runs; docs/benchmarks.md).
   */
  private static final class Begun {
    final OperationId id;
    /** Set, under the slot's lock, when the slot is removed; never cleared. */
    volatile boolean gone;

    Begun(OperationId id) {
      this.id = id;
    }
  }

  private final ConcurrentHashMap<OperationId, Slot> slots = new ConcurrentHashMap<>();
  /**
   * Every identity in {@link #slots}, in {@link #ORDER}, for paging, once {@link #ordered()} has
   * moved in those of {@link #begun}; only that and purge change it.
   */
  private final ConcurrentSkipListSet<OperationId> order = new ConcurrentSkipListSet<>(ORDER);
  /**
   * The identities begun since the last {@link #ordered()}. A begin appends here instead of
   * inserting into {@link #order}: the insert into a skip list of every operation was the dearest
   * part of an in-memory call, and only the listing methods, rarely called, need the order.
   */
  private final ConcurrentLinkedQueue<Begun> begun = new ConcurrentLinkedQueue<>();
  /** About how many identities {@link #begun} holds (a count per begin, not a walk of the queue). */
  private final LongAdder begunCount = new LongAdder();
  /**
   * Every PENDING operation by when it became due ({@link DueRule#dueSince}), then identity:
   * the due pages read it from their cursor instead of sorting every operation on each page. The
   * IN_FLIGHT ones are not in it ({@link #findDue} merges in those from {@link #inFlight} whose
   * lease ran out): nearly every call is IN_FLIGHT for the time of one request, and entering and
   * leaving this index then cost two skip-list updates per call.
   * Changed under the operation's slot lock, with its record.
   */
  private final ConcurrentSkipListSet<DueKey> due = new ConcurrentSkipListSet<>(DueKey.ORDER);
  /**
   * The identities of the IN_FLIGHT operations, changed like {@link #due}. A hash set, sorted by
   * {@link #findDue} when it pages through it: every call enters it and leaves it, and ordering it
   * on each change cost two skip-list updates per call, while the set holds only the operations
   * being sent right now and those whose sender stopped without releasing them (this journal does
   * not outlive its process, so no lease of an earlier incarnation stays behind).
   */
  private final Set<OperationId> inFlight = ConcurrentHashMap.newKeySet();
  /**
   * The places ({@link Slot#place}) of the SUCCEEDED and FAILED operations that may be dropped, in
   * the order they became so. An entry that is no longer its slot's latest place, or whose slot is
   * no longer droppable, is passed over when it comes up; those of purged slots are swept by purge.
   */
  private final ConcurrentLinkedQueue<Object> finished = new ConcurrentLinkedQueue<>();
  /**
   * The same for the UNCERTAIN ones, dropped only once {@link #finished} holds none: they are the
   * operations an app still has to reconcile ({@code reconcileUncertain}), and an outage that makes
   * many of them (timeouts after the request went out) should not push them out behind thousands
   * of successes finished since. The bound still holds: past it they go too, oldest first.
   */
  private final ConcurrentLinkedQueue<Object> uncertain = new ConcurrentLinkedQueue<>();
  /** The summed weights of the droppable operations. */
  private final AtomicLong finishedBytes = new AtomicLong();
  private final long maxFinishedBytes;
  /**
   * Held while {@link #begun} is moved into {@link #order}: a listing waits for it, so that it
   * never misses an operation whose begin returned before the listing started; a dropping caller
   * only tries it.
   */
  private final ReentrantLock moving = new ReentrantLock();
  /** Held by the one caller dropping operations over the bound (see {@link #dropIfOver}); only tried. */
  private final ReentrantLock dropping = new ReentrantLock();

  /** A place in {@link #due}. */
  private record DueKey(Instant at, OperationId id) {
    // Written out, not Comparator.comparing(...).thenComparing(...): every call inserts and removes
    // entries here, at about 20 comparisons each, and the chain of lambdas cost more than the compare.
    static final Comparator<DueKey> ORDER = (a, b) -> {
      int c = a.at().compareTo(b.at());
      return c != 0 ? c : InMemoryJournal.compare(a.id(), b.id());
    };

    static DueKey of(OperationRecord r) {
      return new DueKey(DueRule.dueSince(r), r.id());
    }
  }
  private volatile boolean closed;

  /** A journal that keeps {@value #DEFAULT_MAX_FINISHED_BYTES} bytes of finished operations, estimated. */
  public InMemoryJournal() {
    this(DEFAULT_MAX_FINISHED_BYTES);
  }

  /**
   * A journal that keeps finished operations up to an estimated size, then drops the ones that
   * finished first, the UNCERTAIN ones last (see the class comment). The estimate counts each
   * operation's packed record (its URL, headers, bodies and attempts), its key, and 220 bytes for
   * the rest (see the class comment).
   *
   * <p>Keeping them costs most where calls are many: at thousands of calls a second, each kept
   * operation lives long enough to be copied by a young collection at least once, and it is dropped
   * later from memory no longer in the processor's cache. In the end-to-end benchmark (2 cores, 32
   * threads, 27,000 to 36,000 calls a second) a journal keeping none kept about 0.05 more of raw
   * OkHttp's rate than the default one, and a bound of 4 MiB no more than the default: what costs is
   * keeping operations past their call at all, not how many. An app that neither looks up finished
   * operations ({@link #find}, the listings) nor repeats a finished operation's key (a repeat past
   * the bound is sent again, with the same key, for the server to recognise) may pass a small bound,
   * or 0.
   *
   * @param maxFinishedBytes the finished operations' estimated size to keep, 0 or more: 0 keeps
   *     none (an outcome is still returned to its caller, and never dropped while owed to a
   *     handler); {@link Long#MAX_VALUE} keeps every one until {@link #purge}
   * @throws IllegalArgumentException if {@code maxFinishedBytes} is negative
   */
  public InMemoryJournal(long maxFinishedBytes) {
    if (maxFinishedBytes < 0) {
      throw new IllegalArgumentException("maxFinishedBytes must not be negative: " + maxFinishedBytes);
    }
    this.maxFinishedBytes = maxFinishedBytes;
  }

  @Override
  public BeginResult begin(NewOperation operation) throws IdempotencyException {
    ensureOpen();
    OperationId id = operation.id();
    while (true) {
      Slot slot = slots.get(id);
      if (slot == null) {
        OperationRecord created = OperationRecord.pending(operation);
        Slot fresh = new Slot(created);
        if (slots.putIfAbsent(id, fresh) == null) {
          begun.add(fresh.begun);
          begunCount.increment();
          synchronized (fresh) {
            // The record now, not `created`: a claim may already have replaced it (and indexed its own).
            index(null, fresh.record());
          }
          return new BeginResult(created, true);
        }
        continue;
      }
      OperationRecord existing;
      synchronized (slot) {
        if (slot.removed) {
          continue; // purged meanwhile: begin anew
        }
        existing = slot.record();
      }
      if (!existing.fingerprint().equals(operation.fingerprint())) {
        throw new IdempotencyKeyReusedException(id, false,
            "key " + id.key() + " is already journaled for " + id.scope() + "/"
                + id.operation() + " with another request fingerprint; refusing to send");
      }
      return new BeginResult(existing, false);
    }
  }

  /**
   * Begins an operation and, if this call created it, claims it, as the journal interface says. A
   * new operation goes into the journal already IN_FLIGHT under the lease: one record and one index
   * change, where begin then claim make and index three.
   *
   * @param operation the operation to record; not queued
   * @param owner the name of the claiming instance
   * @param leaseFor how long the claim lasts
   * @return the record, IN_FLIGHT under the lease if this call created it; else as begin returns it
   * @throws IllegalArgumentException if the operation is queued or {@code leaseFor} is not positive;
   *     nothing is journaled
   * @throws IdempotencyKeyReusedException if the identity exists with another fingerprint
   * @throws IdempotencyException if the journal is closed
   */
  @Override
  public BeginResult beginAndClaim(NewOperation operation, String owner, Duration leaseFor)
      throws IdempotencyException {
    if (operation.queued()) {
      throw new IllegalArgumentException("a queued operation is claimed when it is delivered, not at its begin");
    }
    if (leaseFor.isNegative() || leaseFor.isZero()) {
      // A lease that has expired as it is taken: any other owner could send the operation at once.
      throw new IllegalArgumentException("leaseFor must be positive: " + leaseFor);
    }
    ensureOpen();
    OperationId id = operation.id();
    // No lookup before the insert: nearly every call brings a fresh key, and a look-up of a key the
    // map does not hold cost as much as the insert (a cache miss into a table of every operation).
    Instant now = operation.createdAt();
    // The first claim of an operation nobody held: generation 1, not a takeover.
    Lease lease = new Lease(owner, 1, now.plus(leaseFor), false);
    // What pending(operation).with(IN_FLIGHT, ...) makes, without the PENDING copy in between.
    OperationRecord claimed = new OperationRecord(id, operation.reference(), operation.fingerprint(),
        operation.request(), OperationState.IN_FLIGHT, owner, lease.generation(), lease.expiresAt(), null, now, now,
        List.of(), null, null, operation.queued(), null);
    Slot fresh = new Slot(claimed);
    if (slots.putIfAbsent(id, fresh) != null) {
      return begin(operation); // begun meanwhile: returned as begin returns it, unclaimed
    }
    begun.add(fresh.begun);
    begunCount.increment();
    synchronized (fresh) {
      index(null, fresh.record());
    }
    return new BeginResult(claimed, true, lease);
  }

  @Override
  public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
    ensureOpen();
    Slot slot = slots.get(id);
    if (slot == null) {
      return Optional.empty();
    }
    synchronized (slot) {
      return slot.removed ? Optional.empty() : Optional.of(slot.record());
    }
  }

  @Override
  public List<OperationRecord> findByReference(String scope, String reference)
      throws IdempotencyException {
    ensureOpen();
    List<OperationRecord> found = new ArrayList<>();
    for (OperationId id : ordered()) {
      if (!id.scope().equals(scope)) {
        continue;
      }
      OperationRecord r = latest(id);
      if (r != null && reference.equals(r.reference())) {
        found.add(r);
      }
    }
    found.sort(Comparator.comparing(OperationRecord::createdAt));
    return List.copyOf(found);
  }

  @Override
  public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    return claimIf(id, null, owner, now, leaseFor);
  }

  /** {@link #claim}, and only if the operation is still at {@code asRead}'s state and generation, if given. */
  private Optional<Lease> claimIf(OperationId id, OperationRecord asRead, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    ensureOpen();
    Slot slot = existing(id);
    synchronized (slot) {
      OperationRecord r = current(slot, id);
      if (asRead != null && (r.state() != asRead.state() || r.generation() != asRead.generation())) {
        return Optional.empty();
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
      Lease lease = new Lease(owner, r.generation() + 1, now.plus(leaseFor), r.state() == OperationState.IN_FLIGHT);
      set(slot, r.with(OperationState.IN_FLIGHT, owner, lease.generation(), lease.expiresAt(), null, now,
          null, null));
      return Optional.of(lease);
    }
  }

  /** {@inheritDoc} Fenced: an operation that changed since {@code asRead} is left. */
  @Override
  public Optional<Lease> claimIfUnchanged(OperationRecord asRead, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    return claimIf(asRead.id(), asRead, owner, now, leaseFor);
  }

  @Override
  public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt)
      throws IdempotencyException {
    update(id, r -> fenced(r, id, lease).withAttempt(attempt, attempt.endedAt()));
  }

  @Override
  public OperationRecord transition(OperationId id, Lease lease, Transition t)
      throws IdempotencyException {
    return update(id, r -> {
      OperationState.checkTransition(fenced(r, id, lease).state(), t.target());
      return moved(r, t);
    });
  }

  /**
   * Appends the attempt and moves the operation under one lock, with one index change; nothing is
   * kept if the transition is refused.
   *
   * @param id the operation
   * @param lease the lease the caller holds on it
   * @param attempt the attempt that just ended
   * @param t the target state and what to store with it
   * @throws StaleOwnerException if {@code lease} is not the current one
   * @throws IllegalStateException if the transition is not allowed
   * @throws IdempotencyException if the journal is closed
   */
  @Override
  public void recordAttemptAndTransition(OperationId id, Lease lease, AttemptRecord attempt, Transition t)
      throws IdempotencyException {
    update(id, r -> {
      OperationState.checkTransition(fenced(r, id, lease).state(), t.target());
      // What moved(r.withAttempt(...), t) makes, in one copy: withAttempt's updatedAt is
      // overwritten by the transition's at.
      return r.withAttemptAnd(attempt, t.target(), r.owner(), r.generation(), null, t.nextAttemptAt(), t.at(),
          t.response(), t.reason());
    });
  }

  @Override
  public OperationRecord abandon(OperationId id, Transition t) throws IdempotencyException {
    return update(id, r -> {
      OperationState.checkAbandon(r.state(), t.target());
      return moved(r, t);
    });
  }

  /** {@code r} moved as {@code t} says; no lease is held after it. */
  private static OperationRecord moved(OperationRecord r, Transition t) {
    return r.with(t.target(), r.owner(), r.generation(), null, t.nextAttemptAt(), t.at(), t.response(), t.reason());
  }

  @Override
  public OperationRecord redrive(OperationId id, Instant now) throws IdempotencyException {
    return update(id, r -> {
      OperationState.checkRedrive(r.state());
      return redriven(r, now);
    });
  }

  /**
   * {@inheritDoc}
   *
   * <p>Atomic: the check and the re-drive are made under the operation's lock.
   */
  @Override
  public Optional<OperationRecord> redriveIfUnchanged(OperationRecord asRead, Instant now)
      throws IdempotencyException {
    Objects.requireNonNull(asRead, "asRead");
    Objects.requireNonNull(now, "now");
    OperationState.checkRedrive(asRead.state());
    ensureOpen();
    Slot slot = slots.get(asRead.id());
    if (slot == null) {
      return Optional.empty();
    }
    OperationRecord updated;
    synchronized (slot) {
      OperationRecord r = slot.removed ? null : slot.record();
      if (r == null || r.state() != asRead.state() || r.generation() != asRead.generation()) {
        return Optional.empty();
      }
      updated = redriven(r, now);
      set(slot, updated);
    }
    dropIfOver();
    return Optional.of(updated);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Atomic: the check and the settlement are one change under the operation's lock, so no
   * other caller ever reads it PENDING or IN_FLIGHT on the way. {@code leaseFor} is not used.
   */
  @Override
  public Optional<OperationRecord> settleIfUnchanged(OperationRecord asRead, String owner, Duration leaseFor,
      Transition settlement) throws IdempotencyException {
    Objects.requireNonNull(asRead, "asRead");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(leaseFor, "leaseFor");
    Objects.requireNonNull(settlement, "settlement");
    OperationState.checkSettle(asRead.state(), settlement.target());
    ensureOpen();
    Slot slot = slots.get(asRead.id());
    if (slot == null) {
      return Optional.empty();
    }
    OperationRecord updated;
    synchronized (slot) {
      OperationRecord r = slot.removed ? null : slot.record();
      if (r == null || r.state() != asRead.state() || r.generation() != asRead.generation()) {
        return Optional.empty();
      }
      // What a re-drive, a claim under owner and the finishing transition leave, in one change;
      // createdAt kept: a settlement sends nothing, and the creation time orders findByReference.
      updated = r.with(settlement.target(), owner, r.generation() + 1, null, null, settlement.at(),
          settlement.response(), settlement.reason()).withOutcomeDeliveredAt(null);
      // It finishes again, as a re-driven operation does: its weight taken off first, so that set
      // weighs it anew and moves its place out of the UNCERTAIN drop queue (where it would wait, the
      // slot with it, until that queue is polled) into the one of its new state.
      if (slot.weight != 0) {
        finishedBytes.addAndGet(-slot.weight);
        slot.weight = 0;
      }
      set(slot, updated);
    }
    dropIfOver();
    return Optional.of(updated);
  }

  /**
   * {@code r} re-driven at {@code now}: {@code createdAt} moves to {@code now} only if no attempt
   * may have reached the server, since the age limit of queued delivery counts from it and must
   * keep bounding the time since an attempt that may have (see {@link Journal#redrive}).
   */
  private static OperationRecord redriven(OperationRecord r, Instant now) {
    Instant createdAt = r.attempts().stream().anyMatch(AttemptRecord::mayHaveReachedServer) ? r.createdAt() : now;
    return new OperationRecord(r.id(), r.reference(), r.fingerprint(), r.request(), OperationState.PENDING,
        r.owner(), r.generation(), null, null, createdAt, now, r.attempts(), null, "re-driven from " + r.state(),
        r.queued(), null);
  }

  /** What a change makes of an operation's record; it throws to change nothing. */
  private interface Change {
    OperationRecord apply(OperationRecord r) throws IdempotencyException;
  }

  /**
   * Replaces the record of an existing operation with what {@code change} makes of it, under its
   * slot's lock.
   */
  private OperationRecord update(OperationId id, Change change) throws IdempotencyException {
    ensureOpen();
    Slot slot = existing(id);
    OperationRecord updated;
    synchronized (slot) {
      updated = change.apply(current(slot, id));
      set(slot, updated);
    }
    dropIfOver();
    return updated;
  }

  @Override
  public boolean recordOutcomeDelivered(OperationId id, Instant at) throws IdempotencyException {
    ensureOpen();
    java.util.Objects.requireNonNull(at, "at");
    Slot slot = slots.get(id);
    if (slot == null) {
      return false;
    }
    synchronized (slot) {
      OperationRecord r = slot.record();
      if (slot.removed || !r.state().isTerminal() || r.outcomeDeliveredAt() != null) {
        return false;
      }
      set(slot, r.withOutcomeDeliveredAt(at));
    }
    dropIfOver();
    return true;
  }

  /**
   * Replaces the record of {@code slot}, whose lock the caller holds, and keeps the due indexes and
   * the count of droppable operations.
   */
  private void set(Slot slot, OperationRecord next) {
    // Null when packed: a packed record is finished, so it has no place in the due indexes, as if
    // there were none.
    OperationRecord previous = slot.record;
    slot.record = next;
    slot.packed = null;
    index(previous, next);
    boolean droppable = next.state().isTerminal() && !next.outcomeUndelivered();
    if (droppable && maxFinishedBytes != 0) {
      slot.packed = PackedRecord.pack(next);
      slot.packedState = next.state();
      slot.record = null;
    }
    if (droppable && slot.weight == 0) {
      // What the operation holds, packed (its URL, headers, bodies and attempts as they are, so an
      // app's large headers count too). A journal that keeps none packs nothing and drops it at
      // once: any weight above its bound of 0 does.
      slot.weight = slot.packed != null ? weight(slot.begun.id, slot.packed) : 1;
      finishedBytes.addAndGet(slot.weight);
      Object place;
      if (slot.place == null) {
        place = slot;
      } else {
        // Re-driven, and finished again. Its earlier place, if still queued, would wait there until
        // polled, holding the slot and its record: the UNCERTAIN queue is polled only once the other
        // is empty, so every reconciled operation piled up in it. A walk of the queue, on a
        // re-driven operation's finish only.
        (slot.placeUncertain ? uncertain : finished).remove(slot.place);
        place = new Place(slot);
      }
      slot.place = place;
      slot.placeUncertain = next.state() == OperationState.UNCERTAIN;
      (slot.placeUncertain ? uncertain : finished).add(place);
    } else if (!droppable && slot.weight != 0) {
      finishedBytes.addAndGet(-slot.weight);
      slot.weight = 0;
    }
  }

  /** The heap a finished operation holds while kept, as {@link #set} counts it. Package-private for tests. */
  static long weight(OperationRecord r) {
    return weight(r.id(), PackedRecord.pack(r));
  }

  /** A key lives outside the packed record, and an app's keys may be long: counted as they are. */
  private static long weight(OperationId id, byte[] packed) {
    return SLOT_BYTES + id.key().value().length() + packed.length;
  }

  /**
   * Drops the operations that finished first, the UNCERTAIN ones last, while the finished ones are
   * over the bound; called with no slot lock held, since it takes other slots' locks.
   */
  private void dropIfOver() {
    boolean dropped = false;
    // One caller drops at a time. Callers that each polled an entry before any of them had taken
    // its weight off dropped one operation each, more than the bound asked for, and one that found
    // the SUCCEEDED queue just emptied by another's poll dropped an UNCERTAIN operation while a
    // success was left. A caller that finds another dropping leaves the drop to it, which checks
    // the bound again once it lets go, so that no weight added meanwhile is left over the bound.
    outer:
    while (finishedBytes.get() > maxFinishedBytes && dropping.tryLock()) {
      try {
        while (finishedBytes.get() > maxFinishedBytes) {
          Object place = finished.poll();
          if (place == null) {
            place = uncertain.poll();
            if (place == null) {
              break outer;
            }
          }
          Slot slot = slotOf(place);
          synchronized (slot) {
            if (slot.place == place && !slot.removed && slot.weight != 0) {
              remove(slot);
              dropped = true;
            }
          }
        }
      } finally {
        dropping.unlock();
      }
    }
    if (dropped && begunCount.sum() > slots.size() + BEGUN_SLACK && moving.tryLock()) {
      try {
        trimBegun();
      } finally {
        moving.unlock();
      }
    }
  }

  /**
   * Takes the oldest identities out of {@link #begun} until it holds no more than
   * {@link #BEGUN_SLACK} more than the journal holds operations: those of dropped operations are
   * discarded, those still in the journal moved into the order. The identities begun since the
   * last listing wait there, and a process that never lists would keep those of the dropped
   * operations for ever (about 150 bytes each). Trimming from the oldest end finds nearly only
   * dropped ones, which cost a read of their {@link Begun#gone} mark; moving every waiting
   * identity, as a listing does, would insert the newest into the order only for their drop to
   * take them out again (a third of a dropping caller's time, measured). Under {@link #moving}.
   */
  private void trimBegun() {
    while (begunCount.sum() > slots.size() + BEGUN_SLACK) {
      Begun b = begun.poll();
      if (b == null) {
        return;
      }
      begunCount.decrement();
      if (!b.gone) {
        moveIfKept(b.id);
      }
    }
  }

  /** Takes {@code slot}'s operation out of the journal; under its lock. */
  private void remove(Slot slot) {
    OperationId id = slot.begun.id;
    slot.removed = true;
    slot.begun.gone = true;
    // Out of the order first: a begin of the same identity can only put its new slot in after the
    // old one left the map, so its identity reaches the order after this remove. An identity never
    // moved into the order is not looked for there (a skip-list search per dropped operation).
    if (slot.ordered) {
      order.remove(id);
    }
    slots.remove(id, slot);
    if (slot.weight != 0) {
      finishedBytes.addAndGet(-slot.weight);
      slot.weight = 0;
    }
  }

  /** Moves an operation's entries in {@link #due} and {@link #inFlight}; under its slot lock. */
  private void index(OperationRecord previous, OperationRecord next) {
    DueKey was = previous == null || previous.state() != OperationState.PENDING ? null : DueKey.of(previous);
    DueKey is = next.state() != OperationState.PENDING ? null : DueKey.of(next);
    if (was != null && !was.equals(is)) {
      due.remove(was);
    }
    if (is != null && !is.equals(was)) {
      due.add(is);
    }
    boolean wasInFlight = previous != null && previous.state() == OperationState.IN_FLIGHT;
    boolean isInFlight = next.state() == OperationState.IN_FLIGHT;
    if (wasInFlight && !isInFlight) {
      inFlight.remove(next.id());
    } else if (isInFlight && !wasInFlight) {
      inFlight.add(next.id());
    }
  }

  @Override
  public List<OperationRecord> findUndelivered(OperationId after, int limit) throws IdempotencyException {
    return page(after, limit, null, null, OperationRecord::outcomeUndelivered);
  }

  @Override
  public List<OperationRecord> findDue(Instant now, OperationId after, int limit)
      throws IdempotencyException {
    return page(after, limit, null, null, r -> (r.state() == OperationState.PENDING
        && (r.nextAttemptAt() == null || !r.nextAttemptAt().isAfter(now)))
        || (r.state() == OperationState.IN_FLIGHT && !r.isLeasedAt(now)));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Reads the IN_FLIGHT operations for the owner's own leases, then an index of the PENDING
   * operations by due time from the cursor on, merged with the IN_FLIGHT ones whose lease ran out,
   * so a page costs about its own size plus the operations in flight.
   */
  @Override
  public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
      throws IdempotencyException {
    return findDue(now, owner, null, after, limit);
  }

  /**
   * {@inheritDoc}
   *
   * <p>As {@link #findDue(Instant, String, OperationRecord, int)}, with the names compared on the
   * index's entries, before an operation's record is looked at.
   */
  @Override
  public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
      int limit) throws IdempotencyException {
    if (names != null && names.isEmpty()) {
      throw new IllegalArgumentException("names is empty: a page of no names is always empty");
    }
    Objects.requireNonNull(now, "now");
    Objects.requireNonNull(owner, "owner");
    ensureOpen();
    Checks.atLeastOne(limit, "limit");
    List<OperationRecord> page = new ArrayList<>();
    DueKey from = null;
    if (after == null || DueRule.isOwnLease(after, owner, now)) {
      for (OperationId id : inFlightAfter(after == null ? null : after.id())) {
        if (names != null && !names.contains(id.operation())) {
          continue;
        }
        OperationRecord r = latest(id);
        if (r != null && DueRule.isOwnLease(r, owner, now)) {
          page.add(r);
          if (page.size() == limit) {
            return List.copyOf(page);
          }
        }
      }
    } else {
      from = DueKey.of(after);
    }
    // The PENDING operations from the index, merged in due order with the IN_FLIGHT ones whose
    // lease ran out (which the index leaves out: see #due).
    List<DueKey> expired = expiredLeasesAfter(from, now);
    Iterator<DueKey> pending = (from == null ? due : due.tailSet(from, false)).iterator();
    DueKey nextPending = pending.hasNext() ? pending.next() : null;
    int nextExpired = 0;
    while (nextPending != null || nextExpired < expired.size()) {
      DueKey key;
      if (nextPending != null
          && (nextExpired == expired.size() || DueKey.ORDER.compare(nextPending, expired.get(nextExpired)) < 0)) {
        key = nextPending;
        nextPending = pending.hasNext() ? pending.next() : null;
      } else {
        key = expired.get(nextExpired++);
      }
      if (names != null && !names.contains(key.id().operation())) {
        continue;
      }
      OperationRecord r = latest(key.id());
      // An entry the operation has left since (its new one is further on) is skipped, so that a
      // page never holds an operation twice.
      if (r == null || r.state().isTerminal() || !DueKey.of(r).equals(key)) {
        continue;
      }
      if (DueRule.isDueFor(r, owner, now) && !DueRule.isOwnLease(r, owner, now)) {
        page.add(r);
        if (page.size() == limit) {
          break;
        }
      }
    }
    return List.copyOf(page);
  }

  /** The places of the IN_FLIGHT operations whose lease ran out by {@code now}, after {@code from}, in due order. */
  private List<DueKey> expiredLeasesAfter(DueKey from, Instant now) {
    List<DueKey> keys = new ArrayList<>();
    for (OperationId id : inFlight) {
      OperationRecord r = latest(id);
      if (r != null && r.state() == OperationState.IN_FLIGHT && !r.isLeasedAt(now)) {
        DueKey key = DueKey.of(r);
        if (from == null || DueKey.ORDER.compare(key, from) > 0) {
          keys.add(key);
        }
      }
    }
    keys.sort(DueKey.ORDER);
    return keys;
  }

  /** The IN_FLIGHT identities after {@code after} (all if null), in {@link #ORDER}. */
  private List<OperationId> inFlightAfter(OperationId after) {
    List<OperationId> ids = new ArrayList<>(inFlight.size());
    for (OperationId id : inFlight) {
      if (after == null || ORDER.compare(id, after) > 0) {
        ids.add(id);
      }
    }
    ids.sort(ORDER);
    return ids;
  }

  @Override
  public List<OperationRecord> findByState(OperationState state, OperationId after, int limit)
      throws IdempotencyException {
    return page(after, limit, null, state.isTerminal() ? state : null, r -> r.state() == state);
  }

  /**
   * {@inheritDoc}
   *
   * <p>As {@link #findByState(OperationState, OperationId, int)}, with the names compared on the
   * identities, before an operation's record is looked at.
   */
  @Override
  public List<OperationRecord> findByState(OperationState state, Set<String> names, OperationId after, int limit)
      throws IdempotencyException {
    if (names.isEmpty()) {
      throw new IllegalArgumentException("names is empty: a page of no names is always empty");
    }
    return page(after, limit, names, state.isTerminal() ? state : null, r -> r.state() == state);
  }

  /**
   * A page of the operations {@code filter} takes, in {@link #ORDER}. A packed operation is finished
   * and owes no handler its outcome: it is unpacked only if it is in {@code packedState}, else
   * passed over unread (a page of the PENDING, undelivered or UNCERTAIN ones would otherwise
   * unpack every finished operation the journal keeps, some 24,000 by default).
   *
   * @param names the operation names to take, or null for every name
   * @param packedState the state of the packed operations {@code filter} may take, or null for none
   */
  private List<OperationRecord> page(OperationId after, int limit, Set<String> names, OperationState packedState,
      Predicate<OperationRecord> filter) throws IdempotencyException {
    ensureOpen();
    Checks.atLeastOne(limit, "limit");
    List<OperationRecord> found = new ArrayList<>();
    for (OperationId id : after == null ? ordered() : ordered().tailSet(after, false)) {
      if (names != null && !names.contains(id.operation())) {
        continue;
      }
      OperationRecord r = latestUnlessPacked(id, packedState);
      if (r != null && filter.test(r)) {
        found.add(r);
        if (found.size() == limit) {
          break;
        }
      }
    }
    return List.copyOf(found);
  }

  @Override
  public int purge(Instant before) throws IdempotencyException {
    ensureOpen();
    int purged = 0;
    for (OperationId id : ordered()) {
      Slot slot = slots.get(id);
      if (slot == null) {
        continue;
      }
      synchronized (slot) {
        OperationRecord r = slot.record();
        // An owed outcome stays for the next resumePending to hand over (Journal.purge).
        if (!slot.removed && r.state().isTerminal() && r.updatedAt().isBefore(before) && !r.outcomeUndelivered()) {
          remove(slot);
          purged++;
        }
      }
    }
    // The purged slots' places in the drop order would otherwise wait there until the bound is
    // reached, each keeping its operation's record.
    finished.removeIf(place -> slotOf(place).removed);
    uncertain.removeIf(place -> slotOf(place).removed);
    return purged;
  }

  @Override
  public void close() {
    closed = true;
  }

  /**
   * {@link #order}, with the identities begun so far moved in. Under a lock, so that a listing
   * never misses an operation whose begin returned before it started while another caller is
   * still moving it.
   */
  private ConcurrentSkipListSet<OperationId> ordered() {
    moving.lock();
    try {
      moveBegun();
    } finally {
      moving.unlock();
    }
    return order;
  }

  /**
   * Moves the identities of {@link #begun} into {@link #order}, each under its slot's lock and
   * only while the slot is in the journal: an operation dropped or purged before its identity was
   * moved must not enter the order after its removal took it out. Under {@link #moving}.
   */
  private void moveBegun() {
    for (Begun b = begun.poll(); b != null; b = begun.poll()) {
      begunCount.decrement();
      if (!b.gone) {
        moveIfKept(b.id);
      }
    }
  }

  /** Puts {@code id} into {@link #order} if the journal holds its operation; under {@link #moving}. */
  private void moveIfKept(OperationId id) {
    Slot slot = slots.get(id);
    if (slot == null) {
      return; // removed; a new begin of the identity queued it again
    }
    synchronized (slot) {
      if (!slot.removed) {
        order.add(id);
        slot.ordered = true;
      }
    }
  }

  /**
   * The latest record of an identity; null if it was purged, or is packed in another state than
   * {@code packedState}.
   */
  private OperationRecord latestUnlessPacked(OperationId id, OperationState packedState) {
    Slot slot = slots.get(id);
    if (slot == null) {
      return null;
    }
    synchronized (slot) {
      if (slot.removed) {
        return null;
      }
      return slot.record != null || slot.packedState != packedState ? slot.record : slot.record();
    }
  }

  /** The latest record of an identity, or null if it was purged. */
  private OperationRecord latest(OperationId id) {
    Slot slot = slots.get(id);
    if (slot == null) {
      return null;
    }
    synchronized (slot) {
      return slot.removed ? null : slot.record();
    }
  }

  private Slot existing(OperationId id) {
    Slot slot = slots.get(id);
    if (slot == null) {
      throw new IllegalStateException("no such operation: " + id);
    }
    return slot;
  }

  /** The slot's record, under its lock; a slot purged since it was looked up holds none. */
  private static OperationRecord current(Slot slot, OperationId id) {
    if (slot.removed) {
      throw new IllegalStateException("no such operation: " + id);
    }
    return slot.record();
  }

  private static OperationRecord fenced(OperationRecord r, OperationId id, Lease lease) throws IdempotencyException {
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
