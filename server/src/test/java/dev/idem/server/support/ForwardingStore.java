package dev.idem.server.support;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.RecordId;
import dev.idem.server.RecordPage;
import dev.idem.server.RecordQuery;
import dev.idem.server.RecordStats;
import dev.idem.server.spi.StoredRecord;
import dev.idem.server.spi.StoredResponse;
import java.time.Instant;
import java.util.Optional;

/**
 * An in-memory store that a test's store extends to change one call (a renewal that hangs, a purge
 * that fails) and pass every other on as it is.
 */
public abstract class ForwardingStore implements IdempotencyStore {
  /** The store every call goes to unless the subclass says otherwise. */
  protected final InMemoryIdempotencyStore real = new InMemoryIdempotencyStore();

  @Override
  public ClaimAttempt claim(RecordId id, Fingerprint fingerprint, String owner, Instant now, Instant leaseUntil,
      Instant expiresAt) {
    return real.claim(id, fingerprint, owner, now, leaseUntil, expiresAt);
  }

  @Override
  public boolean renew(RecordId id, long generation, String owner, Instant now, Instant leaseUntil) {
    return real.renew(id, generation, owner, now, leaseUntil);
  }

  @Override
  public boolean complete(RecordId id, long generation, String owner, Instant now, StoredResponse response,
      Instant expiresAt) {
    return real.complete(id, generation, owner, now, response, expiresAt);
  }

  @Override
  public boolean release(RecordId id, long generation, String owner) {
    return real.release(id, generation, owner);
  }

  @Override
  public int purgeExpired(Instant now) {
    return real.purgeExpired(now);
  }

  @Override
  public Optional<StoredRecord> find(RecordId id) {
    return real.find(id);
  }

  @Override
  public RecordPage records(RecordQuery query, Instant now) {
    return real.records(query, now);
  }

  @Override
  public RecordStats stats(Instant now) {
    return real.stats(now);
  }

  @Override
  public int expireClaims(String holder) {
    return real.expireClaims(holder);
  }

  @Override
  public void close() {
    real.close();
  }
}
