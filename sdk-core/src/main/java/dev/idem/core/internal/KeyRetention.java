package dev.idem.core.internal;

import dev.idem.core.ExpiredPendingAction;
import dev.idem.core.IdempotencyException;
import dev.idem.core.spi.Lease;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Transition;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's key retention, as the client sees it: an operation still pending past it must not
 * be re-sent blindly, because the server may have forgotten the key and would run it again.
 */
public final class KeyRetention {
  private static final Logger LOG = LoggerFactory.getLogger(KeyRetention.class);

  private final EngineSettings settings;
  private final Duration retention;
  private final ExpiredPendingAction action;

  public KeyRetention(EngineSettings settings, Duration retention, ExpiredPendingAction action) {
    this.settings = settings;
    this.retention = retention;
    this.action = action;
  }

  /** True if {@code record} is unfinished and older than the server's key retention. */
  public boolean isExpired(OperationRecord record) {
    return !record.state().isTerminal()
        && record.createdAt().plus(retention).isBefore(settings.clock().instant());
  }

  /**
   * Applies the expired-pending action to {@code record} if it has expired.
   *
   * @return UNCERTAIN if it was settled so; otherwise PENDING (not expired, RESEND, or held by
   *     another owner, in which case that owner's own resume decides)
   */
  public OperationState expireIfDue(OperationRecord record) throws IdempotencyException {
    if (!isExpired(record) || action == ExpiredPendingAction.RESEND) {
      return OperationState.PENDING;
    }
    Instant now = settings.clock().instant();
    String reason = "still pending " + Duration.between(record.createdAt(), now) + " after creation, past the"
        + " server's key retention of " + retention + "; not re-sent blindly, since the server may have"
        + " forgotten the key";
    Optional<Lease> lease = settings.journal().claim(record.id(), settings.owner(), now, settings.leaseFor());
    if (lease.isEmpty()) {
      return OperationState.PENDING;
    }
    settings.journal().transition(record.id(), lease.get(), Transition.finish(OperationState.UNCERTAIN, now,
        record.response(), reason));
    LOG.warn("operation {} expired past the server's key retention; marked UNCERTAIN", record.id());
    return OperationState.UNCERTAIN;
  }
}
