package dev.idem.jdbc.internal;

import dev.idem.storage.Durability;
import dev.idem.storage.Store;
import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyException;
import dev.idem.core.spi.Takeover;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * Settles, at open, what a dead process may have left on the wire, so that guarantee 4 (never
 * FAILED while the effect may exist) holds across crashes.
 *
 * <p>Before any attempt leaves the process the journal durably knows that it may leave: a claim
 * is made durable before its attempt is sent, except the first claim of an inline operation, whose
 * durability is folded into begin's (an inline operation is sent at once, so begin's record stands
 * for "may be sent"). A queued operation (an outbox submission, an enqueue) may wait long before its
 * dispatch, so its first claim is durable like the others. So at open, on a journal that only this
 * process uses:
 * <ul>
 *   <li>an IN_FLIGHT row is a dead process's claim: its attempt may have been sent and answered
 *       with an effect. Unless the attempt of that generation was recorded, an AMBIGUOUS attempt
 *       is added ("the process stopped while this attempt may have been in flight"), and the row
 *       goes back to PENDING, due now;</li>
 *   <li>after a crash (the journal was not closed), an inline PENDING row that was never durably
 *       claimed (generation 0) may have had its first attempt sent under a claim the crash lost: it
 *       gets the same AMBIGUOUS attempt, and its generation moves past the lost claim's;</li>
 *   <li>a queued PENDING row at generation 0 was never claimed, so never sent: it is left alone,
 *       and a later permanent answer to its first attempt ends it FAILED, as it should.</li>
 * </ul>
 * A later permanent answer (a 4xx to the resend) of a settled row ends the operation UNCERTAIN,
 * not FAILED. The price, for inline rows only: one begun but not yet sent before a crash is treated
 * as possibly sent, which can only turn a FAILED into an UNCERTAIN.
 */
public final class CrashRecovery {
  private static final int PAGE = 500;
  /** The reason of the AMBIGUOUS attempt it records: the executor's takeover rule's. */
  public static final String REASON = Takeover.REASON;

  private CrashRecovery() {
  }

  /**
   * @param quarantine sets aside rows whose attempts cannot be decoded, so that the next page's
   *     read, which starts from the first unquarantined row in doubt, does not meet them again
   * @param afterCrash also settle inline PENDING rows never durably claimed (the journal was not closed)
   * @return how many operations were settled
   */
  public static int run(Store store, OperationTable table, RecordCodec codec, Quarantine quarantine, Clock clock,
      boolean afterCrash, String journalName, Logger log) throws IdempotencyException {
    Instant now = clock.instant();
    long nowNanos = Instants.toNanos(now);
    int settled = 0;
    int quarantined = 0;
    List<RawRow> rows;
    do {
      rows = store.read(null, c -> table.inDoubt(c, afterCrash, PAGE));
      for (RawRow r : rows) {
        List<AttemptRecord> attempts;
        try {
          attempts = codec.decodeAttempts(r.attemptsJson());
        } catch (CorruptRowException e) {
          // Left in place, it would head every page read again: a page of them never ended the open.
          quarantine.quarantine(r, e.getMessage());
          quarantined++;
          continue;
        }
        boolean inFlight = "IN_FLIGHT".equals(r.state());
        long generation = inFlight ? r.generation() : r.generation() + 1;
        Optional<AttemptRecord> owed = Takeover.owedAttempt(attempts, generation, now);
        String attemptsJson = r.attemptsJson();
        if (owed.isPresent()) {
          try {
            attemptsJson = codec.appendAttempt(r.attemptsJson(), owed.get());
          } catch (CorruptRowException e) {
            quarantine.quarantine(r, e.getMessage());
            quarantined++;
            continue;
          }
        }
        String json = attemptsJson;
        store.write(Durability.DEFERRED, null, c -> table.settleInDoubt(c, r, generation, json, nowNanos, REASON));
        settled++;
      }
    } while (rows.size() == PAGE);
    if (settled > 0 || quarantined > 0) {
      store.flush();
    }
    if (settled > 0) {
      log.warn("Idem journal {}: {} operation(s) may have had an attempt in flight when the last process stopped;"
          + " each counts an ambiguous attempt and is PENDING again, due now, with its key", journalName, settled);
    }
    return settled;
  }
}
