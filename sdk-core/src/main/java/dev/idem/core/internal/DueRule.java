package dev.idem.core.internal;

import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import java.time.Instant;
import java.util.Comparator;

/**
 * Which operations an owner may take now, and in which order: the rule of
 * {@code Journal.findDue(now, owner, after, limit)}, which {@code resumePending} and the outbox
 * dispatcher both page through. The in-memory journal and the journal SPI's default use it;
 * {@code JdbcJournal} states it in SQL, and the journal contract tests hold both to it.
 *
 * <p>Due for {@code owner} at {@code now}:
 * <ul>
 *   <li>PENDING with no next attempt time, or one not after {@code now};</li>
 *   <li>IN_FLIGHT whose lease has expired (or that has none);</li>
 *   <li>IN_FLIGHT under a live lease held by {@code owner} itself. Owner names are unique among
 *       live instances, so such a lease is an earlier incarnation's (a restart under the same
 *       name) or belongs to an execution running in this instance now; the executor's
 *       single-flight joins the latter instead of claiming it again, and the journal's claim lets
 *       an owner take its own lease back, recording the AMBIGUOUS attempt a dead holder may have
 *       sent.</li>
 * </ul>
 *
 * <p>Order: the owner's own live leases first (so that a restart takes its own work back before
 * the backlog), by identity; then the rest by when each became due, oldest first
 * ({@link #dueSince}), then by identity. The own leases are not ordered by their expiry: a pass
 * that reclaims them moves their expiry, and must not meet them again on its next page.
 */
public final class DueRule {
  private DueRule() {}

  /** Whether {@code r} is due for {@code owner} at {@code now}. */
  public static boolean isDueFor(OperationRecord r, String owner, Instant now) {
    return switch (r.state()) {
      case PENDING -> r.nextAttemptAt() == null || !r.nextAttemptAt().isAfter(now);
      case IN_FLIGHT -> !r.isLeasedAt(now) || owner.equals(r.owner());
      default -> false;
    };
  }

  /** Whether {@code r} is IN_FLIGHT under a live lease of {@code owner}'s: the first part of the order. */
  public static boolean isOwnLease(OperationRecord r, String owner, Instant now) {
    return r.isLeasedAt(now) && owner.equals(r.owner());
  }

  /**
   * When {@code r} became due, for the order: a PENDING operation's next attempt time (its last
   * change if it has none: creation, a re-drive); an IN_FLIGHT one's lease expiry (its last change
   * if it has none).
   */
  public static Instant dueSince(OperationRecord r) {
    Instant at = r.state() == OperationState.IN_FLIGHT ? r.leaseExpiresAt() : r.nextAttemptAt();
    return at == null ? r.updatedAt() : at;
  }

  /** Identity order, as every journal pages: scope, then operation name, then key. */
  public static final Comparator<OperationId> IDENTITY = Comparator.comparing(OperationId::scope)
      .thenComparing(OperationId::operation).thenComparing(id -> id.key().value());

  /** The page order of due records for {@code owner} at {@code now}. */
  public static Comparator<OperationRecord> order(String owner, Instant now) {
    return Comparator.<OperationRecord, Instant>comparing(r -> isOwnLease(r, owner, now) ? Instant.MIN : dueSince(r))
        .thenComparing(OperationRecord::id, IDENTITY);
  }
}
