package dev.idem.core.support;

import dev.idem.core.ForwardingJournal;
import dev.idem.core.IdempotencyException;
import dev.idem.core.Journal;
import dev.idem.core.Lease;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * A journal that lets an owner reclaim its own live lease, as {@code Journal.claim} says a durable
 * journal should (a restarted instance under a stable owner name). {@link dev.idem.core.InMemoryJournal}
 * does not: it never outlives its process, and the persistence module's model test holds it to the
 * durable journals' current claim rule. For the executor's side of the feature only.
 */
public final class OwnLeaseJournal extends ForwardingJournal {
  public OwnLeaseJournal(Journal delegate) {
    super(delegate);
  }

  @Override
  public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    Optional<OperationRecord> r = delegate().find(id);
    if (r.isPresent() && r.get().state() == OperationState.IN_FLIGHT && r.get().isLeasedAt(now)
        && owner.equals(r.get().owner())) {
      // Claim at the instant the lease runs out, for as long as makes it end at now + leaseFor.
      Instant expiry = r.get().leaseExpiresAt();
      return delegate().claim(id, owner, expiry, leaseFor.minus(Duration.between(now, expiry)));
    }
    return delegate().claim(id, owner, now, leaseFor);
  }
}
