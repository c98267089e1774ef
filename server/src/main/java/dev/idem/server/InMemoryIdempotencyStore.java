package dev.idem.server;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.spi.StoredRecord;
import dev.idem.server.spi.StoredResponse;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An {@link IdempotencyStore} in this JVM's memory, for tests, the test kit and single-instance
 * services that accept losing their records on restart (a restart then makes every key new).
 *
 * <p>Bounded: at most {@code maxRecords} records (100,000 by default), and at most
 * {@code maxBytes} of stored answers (their bodies, header names and values; 128 MiB by default),
 * since a record holds an answer of up to the guard's capture cap (1 MiB by default): 100,000 such
 * answers would be about 100 GiB of heap. A completion is always stored (its effect exists), so
 * the bytes may pass {@code maxBytes} by what the claims in flight then complete with. When either
 * bound is reached, a claim of a new key first drops the records past their retention and the released ones (a released record is
 * taken over by any request with its key, so forgetting it changes no answer; it only leaves
 * {@link IdempotencyGuard#records} sooner), and if the store is still full, every record in flight
 * or completed within its retention, it throws {@link IdempotencyStoreException} rather than forget
 * one.
 *
 * <p>Thread-safe: each step is one {@link ConcurrentMap#compute}, atomic per operation.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {
  /** The default bound on the number of records. */
  public static final int DEFAULT_MAX_RECORDS = 100_000;

  /** The default bound on the bytes of stored answers: 128 MiB. */
  public static final long DEFAULT_MAX_BYTES = 128L << 20;

  private final ConcurrentMap<RecordId, Entry> records = new ConcurrentHashMap<>();
  private final int maxRecords;
  private final long maxBytes;
  /** The bytes of the stored answers held ({@link #weight}), kept as each entry changes. */
  private final AtomicLong bytes = new AtomicLong();

  /** A store of at most {@value #DEFAULT_MAX_RECORDS} records and {@link #DEFAULT_MAX_BYTES} of answers. */
  public InMemoryIdempotencyStore() {
    this(DEFAULT_MAX_RECORDS);
  }

  /**
   * A store of at most {@code maxRecords} records and {@link #DEFAULT_MAX_BYTES} of answers.
   *
   * @param maxRecords the most records held at once; at least 1
   * @throws IllegalArgumentException if {@code maxRecords} is less than 1
   */
  public InMemoryIdempotencyStore(int maxRecords) {
    this(maxRecords, DEFAULT_MAX_BYTES);
  }

  /**
   * A store of at most {@code maxRecords} records and {@code maxBytes} of stored answers.
   *
   * @param maxRecords the most records held at once; at least 1
   * @param maxBytes the most bytes of stored answers (bodies, header names and values, one byte
   *     a character) past which a new key is refused; at least 1
   * @throws IllegalArgumentException if either is less than 1
   */
  public InMemoryIdempotencyStore(int maxRecords, long maxBytes) {
    if (maxRecords < 1) {
      throw new IllegalArgumentException("maxRecords must be at least 1: " + maxRecords);
    }
    if (maxBytes < 1) {
      throw new IllegalArgumentException("maxBytes must be at least 1: " + maxBytes);
    }
    this.maxRecords = maxRecords;
    this.maxBytes = maxBytes;
  }

  /** The bytes an entry's stored answer holds: body, header names and values. */
  private static long weight(Entry e) {
    if (e == null || e.record().response().isEmpty()) {
      return 0;
    }
    StoredResponse r = e.record().response().get();
    long n = r.bodyLength();
    for (Map.Entry<String, List<String>> h : r.headers().entrySet()) {
      n += h.getKey().length();
      for (String v : h.getValue()) {
        n += v.length();
      }
    }
    return n;
  }

  /** Counts the change of one entry, from within the map's atomic step that makes it. */
  private Entry counted(Entry before, Entry after) {
    long delta = weight(after) - weight(before);
    if (delta != 0) {
      bytes.addAndGet(delta);
    }
    return after;
  }

  /** Whether a new key must first make room: a bound is reached. */
  private boolean full() {
    return records.size() >= maxRecords || bytes.get() >= maxBytes;
  }

  private record Entry(StoredRecord record, String owner, Instant claimedAt, boolean tookOver) {
    Entry with(StoredRecord r) {
      return new Entry(r, owner, claimedAt, tookOver);
    }
  }

  @Override
  public ClaimAttempt claim(RecordId id, Fingerprint fingerprint, String owner, Instant now, Instant leaseUntil,
      Instant expiresAt) {
    Objects.requireNonNull(fingerprint, "fingerprint");
    Objects.requireNonNull(owner, "owner");
    // Memory would keep it as given; refused all the same, so that every store answers alike.
    id.requireStorable();
    if (full() && !records.containsKey(id)) {
      makeRoom(now);
      if (full()) {
        throw new IdempotencyStoreException("the in-memory idempotency store is full (" + records.size() + " of "
            + maxRecords + " records, " + bytes.get() + " of " + maxBytes + " bytes of stored answers: its"
            + " limits), each in flight or completed within its retention (expired and released records were"
            + " dropped to make room)", null);
      }
    }
    Entry[] before = new Entry[1];
    Entry after = records.compute(id, (k, existing) -> {
      before[0] = existing;
      if (existing == null) {
        return inFlight(id, fingerprint, 1, leaseUntil, expiresAt, owner, now, false);
      }
      StoredRecord r = existing.record();
      if (Takeover.allowed(r, fingerprint, now)) {
        return counted(existing, inFlight(id, fingerprint, r.generation() + 1, leaseUntil, expiresAt, owner, now,
            r.state() == RecordState.IN_FLIGHT));
      }
      return existing;
    });
    if (after != before[0]) {
      return new ClaimAttempt.Claimed(after.record().generation(), after.tookOver());
    }
    return new ClaimAttempt.Existing(after.record());
  }

  private static Entry inFlight(RecordId id, Fingerprint fp, long generation, Instant leaseUntil, Instant expiresAt,
      String owner, Instant now, boolean tookOver) {
    return new Entry(new StoredRecord(id, fp, RecordState.IN_FLIGHT, generation, leaseUntil, expiresAt,
        Optional.empty()), owner, now, tookOver);
  }

  @Override
  public boolean renew(RecordId id, long generation, String owner, Instant now, Instant leaseUntil) {
    return update(id, generation, owner, r -> new StoredRecord(id, r.fingerprint(), RecordState.IN_FLIGHT,
        generation, leaseUntil, r.expiresAt(), Optional.empty()));
  }

  @Override
  public boolean complete(RecordId id, long generation, String owner, Instant now, StoredResponse response,
      Instant expiresAt) {
    Objects.requireNonNull(response, "response");
    return update(id, generation, owner, r -> new StoredRecord(id, r.fingerprint(), RecordState.COMPLETED,
        generation, r.leaseUntil(), expiresAt, Optional.of(response)));
  }

  @Override
  public boolean release(RecordId id, long generation, String owner) {
    return update(id, generation, owner, r -> new StoredRecord(id, r.fingerprint(), RecordState.RELEASED,
        generation, r.leaseUntil(), r.expiresAt(), Optional.empty()));
  }

  /** Changes the claim of this generation and owner, if it is in flight and (unless now is null) its lease is live. */
  private boolean update(RecordId id, long generation, String owner,
      java.util.function.UnaryOperator<StoredRecord> change) {
    boolean[] done = new boolean[1];
    records.computeIfPresent(id, (k, e) -> {
      StoredRecord r = e.record();
      // The fence is the generation and owner, not the lease (IdempotencyStore.complete says why).
      if (r.state() != RecordState.IN_FLIGHT || r.generation() != generation || !e.owner().equals(owner)) {
        return e;
      }
      done[0] = true;
      return counted(e, e.with(change.apply(r)));
    });
    return done[0];
  }

  /**
   * Applies {@code change} to every record, atomically per record.
   *
   * @param change the new entry, the same one to leave it, or null to delete it
   * @return how many records it changed or deleted
   */
  private int changeEach(java.util.function.UnaryOperator<Entry> change) {
    int[] n = new int[1];
    for (RecordId id : records.keySet()) {
      records.computeIfPresent(id, (k, e) -> {
        Entry after = change.apply(e);
        n[0] += after == e ? 0 : 1;
        return after == e ? e : counted(e, after);
      });
    }
    return n[0];
  }

  /**
   * Drops what a full store can forget without losing a live record: records past retention, and
   * released ones, which any request with their key takes over whatever its payload (so dropping
   * one changes no answer), but which would otherwise hold their slot for the whole retention: after
   * an outage of 503s or thrown handlers, new keys were refused for a day.
   *
   * <p>Fencing: a released claim can write nothing more, to its record or to a new one. The key's
   * next claim makes a new record of generation 1, as after a purge, rather than remember the
   * dropped generation (which is the memory being given back); a late write of the released claim
   * (a renewal already under way, a {@link CompletionRetries} retry whose first try landed) still
   * changes nothing, because {@link #update} requires the claim's owner token as well as its
   * generation, and the guard gives every claim a token of its own, never reused.
   */
  private void makeRoom(Instant now) {
    changeEach(e -> Takeover.purgeable(e.record(), now) || e.record().state() == RecordState.RELEASED ? null : e);
  }

  @Override
  public int purgeExpired(Instant now) {
    return changeEach(e -> Takeover.purgeable(e.record(), now) ? null : e);
  }

  @Override
  public Optional<StoredRecord> find(RecordId id) {
    return Optional.ofNullable(records.get(id)).map(Entry::record);
  }

  @Override
  public RecordPage records(RecordQuery query, Instant now) {
    Objects.requireNonNull(query, "query");
    Instant claimedBy = now.minus(query.olderThan());
    List<Entry> matching = new ArrayList<>();
    for (Entry e : records.values()) {
      StoredRecord r = e.record();
      if ((query.state() == null || r.state() == query.state())
          && (!query.stuckOnly() || (r.state() == RecordState.IN_FLIGHT && !r.leaseUntil().isAfter(now)))
          && !e.claimedAt().isAfter(claimedBy)) {
        matching.add(e);
      }
    }
    matching.sort(Comparator.comparing(Entry::claimedAt).thenComparing(e -> e.record().id().caller())
        .thenComparing(e -> e.record().id().route()).thenComparing(e -> e.record().id().key()));
    List<RecordSummary> page = new ArrayList<>();
    for (Entry e : matching.subList(0, Math.min(query.limit(), matching.size()))) {
      StoredRecord r = e.record();
      page.add(new RecordSummary(r.id(), r.state(), r.generation(), e.claimedAt(), r.leaseUntil(), r.expiresAt(),
          RecordSummary.holderOf(e.owner()), e.tookOver(),
          r.response().map(s -> OptionalInt.of(s.status())).orElse(OptionalInt.empty())));
    }
    return new RecordPage(page, matching.size() > query.limit());
  }

  @Override
  public RecordStats stats(Instant now) {
    long[] n = new long[4];
    Instant oldest = null;
    Instant oldestUnexpired = null;
    Instant oldestPurgeable = null;
    for (Entry e : records.values()) {
      StoredRecord r = e.record();
      if (r.expiresAt().isAfter(now)) {
        oldestUnexpired = earlier(oldestUnexpired, e.claimedAt());
      } else if (Takeover.purgeable(r, now)) {
        oldestPurgeable = earlier(oldestPurgeable, r.expiresAt());
      }
      switch (r.state()) {
        case IN_FLIGHT -> {
          n[0]++;
          if (!r.leaseUntil().isAfter(now)) {
            n[1]++;
          }
          oldest = earlier(oldest, e.claimedAt());
        }
        case COMPLETED -> n[2]++;
        case RELEASED -> n[3]++;
      }
    }
    return new RecordStats(n[0], n[1], n[2], n[3], Optional.ofNullable(oldest), Optional.ofNullable(oldestUnexpired),
        Optional.ofNullable(oldestPurgeable));
  }

  private static Instant earlier(Instant a, Instant b) {
    return a == null || b.isBefore(a) ? b : a;
  }

  @Override
  public int expireClaims(String holder) {
    String prefix = Objects.requireNonNull(holder, "holder") + "/";
    return changeEach(e -> {
      StoredRecord r = e.record();
      return r.state() != RecordState.IN_FLIGHT || !e.owner().startsWith(prefix) ? e
          : e.with(new StoredRecord(r.id(), r.fingerprint(), RecordState.IN_FLIGHT, r.generation(), Instant.EPOCH,
              r.expiresAt(), Optional.empty()));
    });
  }

  /**
   * How many records are held, live or not yet purged.
   *
   * @return the number of records
   */
  public int size() {
    return records.size();
  }

  /**
   * The bytes of the stored answers held (bodies, header names and values), live or not yet purged.
   *
   * @return the bytes, as counted against {@code maxBytes}
   */
  public long storedBytes() {
    return bytes.get();
  }

  /** Nothing to release; records stay readable. */
  @Override
  public void close() {}
}
