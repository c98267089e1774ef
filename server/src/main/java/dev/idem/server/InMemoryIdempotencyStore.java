package dev.idem.server;

import dev.idem.core.Fingerprint;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * An {@link IdempotencyStore} in this JVM's memory, for tests, the test kit and single-instance
 * services that accept losing their records on restart (a restart then makes every key new).
 *
 * <p>Bounded: at most {@code maxRecords} records (100,000 by default). When full, a claim first
 * purges expired records, and if the store is still full it throws
 * {@link IdempotencyStoreException} rather than forget a live record.
 *
 * <p>Thread-safe: each step is one {@link ConcurrentMap#compute}, atomic per operation.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {
  /** The default bound on the number of records. */
  public static final int DEFAULT_MAX_RECORDS = 100_000;

  private final ConcurrentMap<RecordId, Entry> records = new ConcurrentHashMap<>();
  private final int maxRecords;

  /** A store of at most {@value #DEFAULT_MAX_RECORDS} records. */
  public InMemoryIdempotencyStore() {
    this(DEFAULT_MAX_RECORDS);
  }

  /**
   * @param maxRecords the most records held at once; at least 1
   * @throws IllegalArgumentException if {@code maxRecords} is less than 1
   */
  public InMemoryIdempotencyStore(int maxRecords) {
    if (maxRecords < 1) {
      throw new IllegalArgumentException("maxRecords must be at least 1: " + maxRecords);
    }
    this.maxRecords = maxRecords;
  }

  private record Entry(StoredRecord record, String owner) {}

  @Override
  public ClaimAttempt claim(RecordId id, Fingerprint fingerprint, String owner, Instant now, Instant leaseUntil,
      Instant expiresAt) {
    Objects.requireNonNull(fingerprint, "fingerprint");
    Objects.requireNonNull(owner, "owner");
    if (records.size() >= maxRecords && !records.containsKey(id)) {
      purgeExpired(now);
      if (records.size() >= maxRecords) {
        throw new IdempotencyStoreException("the in-memory idempotency store holds " + maxRecords
            + " live records, its limit", null);
      }
    }
    Entry[] before = new Entry[1];
    Entry after = records.compute(id, (k, existing) -> {
      before[0] = existing;
      if (existing == null) {
        return inFlight(id, fingerprint, 1, leaseUntil, expiresAt, owner);
      }
      StoredRecord r = existing.record();
      if (Takeover.allowed(r, fingerprint, now)) {
        return inFlight(id, fingerprint, r.generation() + 1, leaseUntil, expiresAt, owner);
      }
      return existing;
    });
    if (after != before[0]) {
      return new ClaimAttempt.Claimed(after.record().generation());
    }
    return new ClaimAttempt.Existing(after.record());
  }

  private static Entry inFlight(RecordId id, Fingerprint fp, long generation, Instant leaseUntil, Instant expiresAt,
      String owner) {
    return new Entry(new StoredRecord(id, fp, RecordState.IN_FLIGHT, generation, leaseUntil, expiresAt,
        Optional.empty()), owner);
  }

  @Override
  public boolean renew(RecordId id, long generation, String owner, Instant now, Instant leaseUntil) {
    return update(id, generation, owner, now, r -> new StoredRecord(id, r.fingerprint(), RecordState.IN_FLIGHT,
        generation, leaseUntil, r.expiresAt(), Optional.empty()));
  }

  @Override
  public boolean complete(RecordId id, long generation, String owner, Instant now, StoredResponse response,
      Instant expiresAt) {
    Objects.requireNonNull(response, "response");
    return update(id, generation, owner, now, r -> new StoredRecord(id, r.fingerprint(), RecordState.COMPLETED,
        generation, r.leaseUntil(), expiresAt, Optional.of(response)));
  }

  @Override
  public boolean release(RecordId id, long generation, String owner) {
    boolean[] done = new boolean[1];
    records.computeIfPresent(id, (k, e) -> {
      StoredRecord r = e.record();
      if (r.state() != RecordState.IN_FLIGHT || r.generation() != generation || !e.owner().equals(owner)) {
        return e;
      }
      done[0] = true;
      return new Entry(new StoredRecord(id, r.fingerprint(), RecordState.RELEASED, generation, r.leaseUntil(),
          r.expiresAt(), Optional.empty()), owner);
    });
    return done[0];
  }

  private boolean update(RecordId id, long generation, String owner, Instant now,
      java.util.function.UnaryOperator<StoredRecord> change) {
    boolean[] done = new boolean[1];
    records.computeIfPresent(id, (k, e) -> {
      StoredRecord r = e.record();
      if (r.state() != RecordState.IN_FLIGHT || r.generation() != generation || !e.owner().equals(owner)
          || !r.leaseUntil().isAfter(now)) {
        return e;
      }
      done[0] = true;
      return new Entry(change.apply(r), owner);
    });
    return done[0];
  }

  @Override
  public int purgeExpired(Instant now) {
    int[] n = new int[1];
    for (RecordId id : records.keySet()) {
      records.computeIfPresent(id, (k, e) -> {
        if (Takeover.purgeable(e.record(), now)) {
          n[0]++;
          return null;
        }
        return e;
      });
    }
    return n[0];
  }

  @Override
  public Optional<StoredRecord> find(RecordId id) {
    return Optional.ofNullable(records.get(id)).map(Entry::record);
  }

  /**
   * How many records are held, live or not yet purged.
   *
   * @return the number of records
   */
  public int size() {
    return records.size();
  }

  /** Nothing to release; records stay readable. */
  @Override
  public void close() {}
}
