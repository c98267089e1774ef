package dev.idem.core.resume;

import dev.idem.core.IdempotentExecutor;

/**
 * What one {@link IdempotentExecutor#resumePending} call did.
 *
 * <p>A pass counts each operation it looks at once in {@code examined}, and in exactly one of
 * {@code succeeded}, {@code failed}, {@code uncertain}, {@code stillPending}, {@code unhandled} and
 * {@code leasedElsewhere}, which so add up to {@code examined}. An operation found held by another
 * owner when the pass tried to claim it is counted in {@code leasedElsewhere} if that owner still
 * holds it when the pass ends, else in {@code stillPending}. A call that waits for leases held
 * elsewhere adds up its passes' counts (an operation looked at by two passes is counted by each),
 * but for {@code leasedElsewhere}, which is the last pass's. A pass that leaves more than 10,000
 * operations unfinished (its target down, say) does not remember every one of them: past those,
 * one that another owner held, or claimed, while the pass ran may be counted twice.
 *
 * @param examined operations looked at: due ones, and ones IN_FLIGHT under a live lease
 * @param succeeded resumed and SUCCEEDED
 * @param failed resumed and FAILED, or ended FAILED at their age limit, never sent
 * @param uncertain resumed and UNCERTAIN, or ended UNCERTAIN at their age limit
 * @param stillPending left PENDING (owned elsewhere when claimed, but no longer at the pass's end;
 *     interrupted, scheduled again, or not sent because the target is unreachable)
 * @param expired of {@code failed} and {@code uncertain}, how many were not sent because they
 *     reached their age limit ({@code maxPendingAge}, below the server's key retention)
 * @param unhandled skipped because no handler is registered for their operation name
 * @param leasedElsewhere of {@code examined}, how many were left alone because another owner holds
 *     a live lease on them (a process that may still be sending them, or that died and whose lease
 *     has not expired yet); they are resumed once their lease expires
 */
public record ResumeSummary(int examined, int succeeded, int failed, int uncertain, int stillPending, int expired,
    int unhandled, int leasedElsewhere) {

  /**
   * A summary with no operation leased elsewhere (the shape before {@code leasedElsewhere} existed).
   *
   * @param examined operations looked at
   * @param succeeded resumed and SUCCEEDED
   * @param failed resumed and FAILED
   * @param uncertain resumed and UNCERTAIN, or ended so at their age limit
   * @param stillPending left PENDING
   * @param expired of {@code failed} and {@code uncertain}, how many reached their age limit
   * @param unhandled skipped for want of a handler
   */
  public ResumeSummary(int examined, int succeeded, int failed, int uncertain, int stillPending, int expired,
      int unhandled) {
    this(examined, succeeded, failed, uncertain, stillPending, expired, unhandled, 0);
  }
}
