package dev.idem.core.internal;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Takeover;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Every claim the executor makes goes through here, so that the takeover rule ({@link Takeover})
 * holds whatever the journal: a journal only stores the claim and says whether it took the
 * operation over.
 */
public final class Claims {
  private Claims() {
  }

  /**
   * Claims {@code id} and, on a takeover, records the attempt its holder may have sent, under the
   * new lease, before anything else is sent.
   *
   * <p>The attempt is a separate write after the claim. A crash between the two loses it, but then
   * the new claim is itself held by a dead process: the next takeover, or the journal's own
   * recovery at open, owes an ambiguous attempt for it, so giving up still ends UNCERTAIN.
   */
  public static Optional<Lease> claim(Journal journal, OperationId id, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    Optional<Lease> claimed = journal.claim(id, owner, now, leaseFor);
    if (claimed.isEmpty() || !claimed.get().takeover()) {
      return claimed;
    }
    Lease lease = claimed.get();
    OperationRecord r = journal.find(id)
        .orElseThrow(() -> new IllegalStateException("operation vanished from the journal: " + id));
    Optional<AttemptRecord> owed = Takeover.owedAttempt(r.attempts(), lease.generation() - 1, now);
    if (owed.isPresent()) {
      journal.recordAttempt(id, lease, owed.get());
    }
    return claimed;
  }
}
