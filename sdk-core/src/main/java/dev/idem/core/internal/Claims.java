package dev.idem.core.internal;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.StaleOwnerException;
import dev.idem.core.spi.Takeover;
import dev.idem.core.spi.Transition;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every claim the executor makes goes through here, so that the takeover rule ({@link Takeover})
 * holds whatever the journal: a journal only stores the claim and says whether it took the
 * operation over.
 */
public final class Claims {
  private static final Logger LOG = LoggerFactory.getLogger(Claims.class);

  private Claims() {
  }

  /**
   * Gives back {@code lease}, a claim of {@code id} under which nothing was sent: the operation is
   * PENDING again, due {@code now}, so that it stays known as never sent by this claim and the next
   * deliverer takes it at once. A claim another owner took over meanwhile is theirs (nothing is
   * written); one that cannot be given back for another reason is taken back when its lease
   * expires (logged).
   *
   * @param why the reason written with the give-back
   * @throws JournalException if the journal cannot be written
   */
  public static void giveBack(Journal journal, OperationId id, Lease lease, Instant now, String why)
      throws JournalException {
    try {
      journal.transition(id, lease, Transition.retryAt(now, now, why));
    } catch (JournalException e) {
      throw e;
    } catch (StaleOwnerException e) {
      LOG.debug("the claim of {} was taken over before it was given back: {}", id, e.toString());
    } catch (IdempotencyException e) {
      LOG.warn("could not give back the claim of {}; it is taken back when its lease expires: {}", id, e.toString());
    }
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
    return claim(journal, id, owner, now, leaseFor, false);
  }

  /**
   * {@link #claim(Journal, OperationId, String, Instant, Duration)}, through
   * {@link Journal#claimWaiting} if {@code named}.
   *
   * @param named whether an app's call named this one operation (execute of an existing operation,
   *     resume(id)): its claim may wait briefly for another process holding it at this moment; a
   *     background pass's does not, so that instances never wait on each other
   */
  public static Optional<Lease> claim(Journal journal, OperationId id, String owner, Instant now, Duration leaseFor,
      boolean named) throws IdempotencyException {
    Optional<Lease> claimed = named ? journal.claimWaiting(id, owner, now, leaseFor)
        : journal.claim(id, owner, now, leaseFor);
    if (claimed.isPresent() && claimed.get().takeover()) {
      recordOwedAttempt(journal, id, claimed.get(), now);
    }
    return claimed;
  }

  /**
   * {@link Journal#claimIfUnchanged}, then, on a takeover, what {@link #claim} does: records the
   * attempt its holder may have sent.
   */
  public static Optional<Lease> claimIfUnchanged(Journal journal, OperationRecord asRead, String owner, Instant now,
      Duration leaseFor) throws IdempotencyException {
    Optional<Lease> claimed = journal.claimIfUnchanged(asRead, owner, now, leaseFor);
    if (claimed.isPresent() && claimed.get().takeover()) {
      recordOwedAttempt(journal, asRead.id(), claimed.get(), now);
    }
    return claimed;
  }

  /**
   * {@link Journal#claimAll}, then, for each claim that took an operation over, what
   * {@link #claim} does: records the attempt its holder may have sent.
   */
  public static List<Optional<Lease>> claimAll(Journal journal, List<OperationRecord> asRead, String owner,
      Instant now, Duration leaseFor) throws IdempotencyException {
    List<Optional<Lease>> claimed = journal.claimAll(asRead, owner, now, leaseFor);
    if (claimed.size() != asRead.size()) {
      throw new IllegalStateException(journal + " answered " + claimed.size() + " claims for " + asRead.size());
    }
    int recorded = 0; // the takeovers before this index have their owed attempt recorded
    try {
      for (; recorded < claimed.size(); recorded++) {
        if (claimed.get(recorded).isPresent() && claimed.get(recorded).get().takeover()) {
          recordOwedAttempt(journal, asRead.get(recorded).id(), claimed.get(recorded).get(), now);
        }
      }
    } catch (IdempotencyException | RuntimeException e) {
      // Nothing of the batch will be sent: its fresh claims are given back, so that they stay known
      // as never sent (held, the next pass would take each over and owe it an ambiguous attempt,
      // and a later 404 would end it UNCERTAIN, not FAILED), and so are the takeovers whose owed
      // attempt is recorded (held, the next takeover would record a second one). A takeover whose
      // owed attempt is not recorded yet stays held: the next takeover records it.
      for (int i = 0; i < claimed.size(); i++) {
        Optional<Lease> lease = claimed.get(i);
        if (lease.isPresent() && (!lease.get().takeover() || i < recorded)) {
          try {
            giveBack(journal, asRead.get(i).id(), lease.get(), now, "claim given back: " + e);
          } catch (JournalException | RuntimeException suppressed) {
            if (suppressed != e) {
              e.addSuppressed(suppressed);
            }
          }
        }
      }
      throw e;
    }
    return claimed;
  }

  private static void recordOwedAttempt(Journal journal, OperationId id, Lease lease, Instant now)
      throws IdempotencyException {
    OperationRecord r = journal.find(id)
        .orElseThrow(() -> new IllegalStateException("operation vanished from the journal: " + id));
    Optional<AttemptRecord> owed = Takeover.owedAttempt(r.attempts(), lease.generation() - 1, now);
    if (owed.isPresent()) {
      journal.recordAttempt(id, lease, owed.get());
    }
  }
}
