package dev.idem.webhooks;

import java.time.Instant;
import java.util.Optional;

/**
 * One handler run from an event's attempt history (the seed asks for a record of every retry, so
 * that a reconciliation can tell how often each event was tried).
 *
 * @param run 1 for the first run ever; never reset
 * @param owner the processor that ran it
 * @param startedAt when it was claimed
 * @param endedAt when it ended; empty while running
 * @param outcome {@code done}, {@code retry}, {@code dead}, {@code interrupted} (the process died, or
 *     the processor's close cut the run short: the decision says which, and whether it counted as an
 *     attempt), {@code stale} (the lease had moved on); empty while running
 * @param error the failure, if any
 * @param decision what was decided and why, such as the retry delay
 */
public record HandlerAttempt(int run, String owner, Instant startedAt, Optional<Instant> endedAt,
    Optional<String> outcome, Optional<String> error, Optional<String> decision) {
}
