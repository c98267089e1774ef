package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import java.lang.reflect.Field;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The retry budget's size-driven sweep, like HostGuard's, must leave head-room: a working set of
 * depleted buckets just under the cap (each host retried once, its bucket full again 980 ms
 * later, one new host a millisecond) would otherwise have every sweep drop the few buckets that
 * just refilled, land just under the cap, and leave the threshold at the cap, so that every
 * twentieth new host scans every bucket.
 */
class TokenBucketSweepCostTest {
  private static final int CAP = 1_000;

  private static long nextSweepAt(TokenBucketRetryBudget budget) throws Exception {
    Field f = TokenBucketRetryBudget.class.getDeclaredField("nextSweepAt");
    f.setAccessible(true);
    return (long) f.get(budget);
  }

  @Test
  void aSteadyStreamOfRetriedNewHostsJustUnderTheCapPaysAConstantShareOfTheSweeps() throws Exception {
    VirtualTime time = new VirtualTime();
    // One token, spent by a retry and refilled 980 ms later: about 980 depleted buckets at a time.
    TokenBucketRetryBudget budget = new TokenBucketRetryBudget(1, 1, 0, 1 / 0.98, time.clock(), CAP);
    int host = 0;
    for (; host < 3_000; host++) {
      assertTrue(budget.tryAcquireRetry(host(host)));
      time.advance(Duration.ofMillis(1));
    }
    // 2,000 more new hosts (2 s, no minute-driven sweep): count the sweeps (each restamps nextSweepAt).
    int sweeps = 0;
    long last = nextSweepAt(budget);
    for (int i = 0; i < 2_000; i++, host++) {
      assertTrue(budget.tryAcquireRetry(host(host)));
      time.advance(Duration.ofMillis(1));
      long now = nextSweepAt(budget);
      if (now != last) {
        sweeps++;
        last = now;
      }
    }
    // Each sweep leaves room for a quarter of the cap (250 new hosts): 2,000 need at most 8, plus slack.
    assertTrue(sweeps <= 10, "2,000 new hosts ran " + sweeps + " sweeps, each a scan of all "
        + budget.hostsHeld() + " buckets");
    assertTrue(budget.hostsHeld() <= CAP + CAP / 4 + 1, "held " + budget.hostsHeld());
    // What was kept is what matters: a host retried 100 ms ago still has no token.
    assertFalse(budget.tryAcquireRetry(host(host - 100)), "a depleted bucket was dropped");
  }

  private static String host(int i) {
    return "tenant-" + i + ".example.com:443";
  }
}
