package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.testing.VirtualTime;
import java.lang.reflect.Field;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * HostGuard promises that a run of new hosts past the cap costs each call "a constant share of
 * the sweeps". A client whose working set sits at the cap -- one new host every 6 ms, each called
 * once, so about 10,000 hosts were used within the last minute (webhooks to per-tenant URLs) --
 * gets a full scan of every breaker on every new host: each sweep drops the one or two breakers
 * that just passed MIN_IDLE, lands at or just under MAX_HOSTS, and resets sweepAbove to MAX_HOSTS
 * instead of leaving head-room, so the very next new host triggers the next O(n) sweep.
 */
class HostGuardSweepCostReviewTest {
  private static final Duration TOOK = Duration.ofMillis(20);

  private static long nextSweepAt(HostGuard guard) throws Exception {
    Field f = HostGuard.class.getDeclaredField("nextSweepAt");
    f.setAccessible(true);
    return (long) f.get(guard);
  }

  @Test
  void aSteadyStreamOfNewHostsAtTheCapDoesNotScanEveryBreakerOnEveryNewHost() throws Exception {
    VirtualTime time = new VirtualTime();
    HostGuard guard = new HostGuard(CircuitBreakerSettings.ofDefaults(), RetryBudget.unlimited(), time.clock(),
        e -> {});
    int cap = HostGuard.MAX_HOSTS;
    int host = 0;
    // Warm up: a minute and a half of new hosts, one every 6 ms (10,000 a minute, the cap).
    for (; host < 15_000; host++) {
      call(guard, host);
      time.advance(Duration.ofMillis(6));
    }
    // Then 2,000 more new hosts (12 s): count the sweeps they run (each sweep restamps nextSweepAt).
    int sweeps = 0;
    long last = nextSweepAt(guard);
    for (int i = 0; i < 2_000; i++, host++) {
      call(guard, host);
      time.advance(Duration.ofMillis(6));
      long now = nextSweepAt(guard);
      if (now != last) {
        sweeps++;
        last = now;
      }
    }
    assertTrue(guard.hostsHeld() <= cap + cap / 2, "held " + guard.hostsHeld());
    // A sweep that went down to 3/4 of the cap would leave room for 2,500 new hosts; allow 10x that.
    assertTrue(sweeps <= 10, "2,000 new hosts ran " + sweeps + " sweeps, each a scan of all "
        + guard.hostsHeld() + " breakers (O(n) per new host at the cap)");
  }

  private static void call(HostGuard guard, int i) {
    String h = "tenant-" + i + ".example.com:443";
    assertEquals(HostGuard.Refusal.NONE, guard.admit(h, false));
    guard.record(h, Classification.SUCCESS, HostGuard.Health.UP, TOOK, false);
  }
}
