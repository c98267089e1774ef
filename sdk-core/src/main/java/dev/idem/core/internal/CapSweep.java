package dev.idem.core.internal;

/**
 * When a per-host map that is swept on the way of a call bringing a new host ({@link HostGuard}'s
 * breakers, {@link TokenBucketRetryBudget}'s buckets) next sweeps because of its size. Stateless.
 *
 * <p>A sweep scans every entry, so it must be paid for by the new hosts since the last one: each
 * sweep leaves head-room of at least a quarter of the larger of the cap and what it left. A sweep
 * that got down to its target ({@link #target}) leaves the cap itself as the threshold, at least a
 * quarter of the cap away. One that could not (the rest were open, depleted, or in use within the
 * last minute) sets the threshold a quarter above the larger of the cap and what it left: the map
 * may then exceed the cap by that quarter, and sweeps that keep dropping almost nothing come at
 * thresholds growing by a quarter each time. Either way the next size-driven sweep scans at most
 * about five entries per new host added since the last one: an amortised constant share per new
 * host, instead of a full scan for every other one when a sweep drops just one or two entries and
 * the threshold is left at the cap.
 */
final class CapSweep {
  private CapSweep() {}

  /** The size a size-driven sweep brings the map down to, if it can: three quarters of the cap. */
  static int target(int maxHosts) {
    return maxHosts - maxHosts / 4;
  }

  /**
   * @param left the entries left after a sweep
   * @param maxHosts the cap, at least 1
   * @return the size past which a call bringing a new host sweeps again, whatever the time
   */
  static int nextThreshold(int left, int maxHosts) {
    if (left <= target(maxHosts)) {
      return maxHosts;
    }
    int base = Math.max(maxHosts, left);
    // At least one: with a tiny cap a quarter rounds to nothing, and no head-room is the bug.
    return base + Math.max(1, base / 4);
  }
}
