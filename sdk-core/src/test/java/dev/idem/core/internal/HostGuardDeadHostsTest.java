package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Hosts that go down and are never called again (dead callback URLs) do not add up: an open
 * breaker whose open period ended {@link HostGuard#IDLE_AFTER} ago, unused as long, is dropped past
 * the cap, while one whose open period lasts keeps its host refused.
 */
class HostGuardDeadHostsTest {
  private static final Duration TOOK = Duration.ofMillis(20);
  private final VirtualTime time = new VirtualTime();

  private static void succeed(HostGuard guard, String host) {
    assertEquals(HostGuard.Refusal.NONE, guard.admit(host, false), host);
    guard.record(host, Classification.SUCCESS, HostGuard.Health.UP, TOOK, false);
  }

  private static void open(HostGuard guard, String host) {
    for (int i = 0; i < 2; i++) {
      assertEquals(HostGuard.Refusal.NONE, guard.admit(host, false), host);
      guard.record(host, Classification.SAFE, HostGuard.Health.DOWN, TOOK, false);
    }
    assertEquals(HostGuard.Refusal.BREAKER_OPEN, guard.admit(host, false), host);
  }

  @Test
  void wavesOfHostsThatGoDownAndAreNeverCalledAgainDoNotAddUp() {
    Duration openFor = Duration.ofMinutes(30);
    CircuitBreakerSettings settings = CircuitBreakerSettings.builder().minimumCalls(2).slidingWindowSize(2)
        .openFor(openFor).build();
    HostGuard guard = new HostGuard(settings, RetryBudget.unlimited(), time.clock(), e -> {}, 10);
    String stillDown = null;
    for (int wave = 0; wave < 5; wave++) {
      for (int i = 0; i < 1_000; i++) {
        open(guard, "dead-" + wave + "-" + i + ".example.com:443");
      }
      // Their open period is over, but not yet for IDLE_AFTER: the sweep a new host brings keeps them.
      time.advance(openFor.plus(HostGuard.IDLE_AFTER).minusMinutes(1));
      succeed(guard, "probe-" + wave + ".example.com:443");
      assertTrue(guard.hostsHeld() >= 1_000, "dropped too soon: held " + guard.hostsHeld());

      time.advance(Duration.ofMinutes(2));
      stillDown = "still-down-" + wave + ".example.com:443";
      open(guard, stillDown);
      for (int i = 0; i < 200; i++) {   // 200 s of new healthy hosts
        succeed(guard, "tenant-" + wave + "-" + i + ".example.com:443");
        time.advance(Duration.ofSeconds(1));
      }
      // The 1,000 dead hosts are gone: what is left is the hosts called lately.
      assertTrue(guard.hostsHeld() <= 200 + 10, "wave " + wave + ": held " + guard.hostsHeld());
      assertEquals(HostGuard.Refusal.BREAKER_OPEN, guard.admit(stillDown, false), "forgot " + stillDown);
      assertTrue(guard.untilProbe(stillDown).compareTo(Duration.ZERO) > 0);
    }
    assertEquals(HostGuard.Refusal.BREAKER_OPEN, guard.admit(stillDown, false));
  }

  @Test
  void aDeadHostDroppedAndCalledAgainGetsAWorkingFreshBreaker() {
    Duration openFor = Duration.ofMinutes(1);
    CircuitBreakerSettings settings = CircuitBreakerSettings.builder().minimumCalls(2).slidingWindowSize(2)
        .openFor(openFor).halfOpenProbes(1).build();
    List<IdemEvent.BreakerStateChanged> events = new CopyOnWriteArrayList<>();
    HostGuard guard = new HostGuard(settings, RetryBudget.unlimited(), time.clock(),
        e -> events.add((IdemEvent.BreakerStateChanged) e), 10);
    String dead = "dead.example.com:443";
    open(guard, dead);
    for (int i = 0; i < 20; i++) {
      open(guard, "other-dead-" + i + ".example.com:443");
      time.advance(Duration.ofSeconds(1));
    }
    time.advance(openFor.plus(HostGuard.IDLE_AFTER).plusMinutes(1));
    succeed(guard, "new.example.com:443");   // brings the sweep: down to three quarters of the cap
    assertTrue(guard.hostsHeld() <= 10, "held " + guard.hostsHeld());
    // Each dropped open breaker is told as a reset, OPEN to CLOSED: the listener, last told OPEN,
    // would otherwise keep the host open for good. The dead host, among the longest unused, went.
    int dropped = 21 + 1 - guard.hostsHeld();
    List<IdemEvent.BreakerStateChanged> told = events.subList(21, events.size());
    assertEquals(dropped, told.size(), "told " + told);
    assertTrue(told.contains(new IdemEvent.BreakerStateChanged(dead, "OPEN", "CLOSED")), "told " + told);
    assertTrue(told.stream().allMatch(c -> c.from().equals("OPEN") && c.to().equals("CLOSED")), "told " + told);

    events.clear();
    // A fresh, closed breaker: it admits every call, not just the one half-open probe.
    for (int i = 0; i < 3; i++) {
      assertEquals(HostGuard.Refusal.NONE, guard.admit(dead, false), "call " + i);
    }
    for (int i = 0; i < 3; i++) {
      guard.release(dead);
    }
    assertEquals(List.of(), events, "the old open breaker was kept and half-opened");
    assertEquals(Duration.ZERO, guard.untilProbe(dead));

    // And it works: two failures open it again, for a whole open period.
    open(guard, dead);
    assertEquals(List.of(new IdemEvent.BreakerStateChanged(dead, "CLOSED", "OPEN")), events);
    assertEquals(openFor.plusMillis(1), guard.untilProbe(dead));
    time.advance(openFor.plusMillis(1));
    assertEquals(HostGuard.Refusal.NONE, guard.admit(dead, false));   // the probe
    assertEquals(HostGuard.Refusal.BREAKER_OPEN, guard.admit(dead, false));
    guard.record(dead, Classification.SUCCESS, HostGuard.Health.UP, TOOK, false);
    assertEquals(HostGuard.Refusal.NONE, guard.admit(dead, false));
    guard.release(dead);
  }

  @Test
  void underTheCapAnOpenBreakerLongPastItsPeriodIsKeptAndItsHostGetsOnlyTheProbe() {
    Duration openFor = Duration.ofMinutes(1);
    CircuitBreakerSettings settings = CircuitBreakerSettings.builder().minimumCalls(2).slidingWindowSize(2)
        .openFor(openFor).halfOpenProbes(1).build();
    HostGuard guard = new HostGuard(settings, RetryBudget.unlimited(), time.clock(), e -> {}, 10_000);
    String dead = "dead.example.com:443";
    open(guard, dead);
    time.advance(openFor.plus(HostGuard.IDLE_AFTER).plusMinutes(10));
    succeed(guard, "new.example.com:443");   // brings the minute's sweep
    assertEquals(2, guard.hostsHeld());
    // Called again by a deliverer's later round: one probe, not the minimum calls of a new breaker.
    assertEquals(HostGuard.Refusal.NONE, guard.admit(dead, false));
    assertEquals(HostGuard.Refusal.BREAKER_OPEN, guard.admit(dead, false));
    guard.record(dead, Classification.SAFE, HostGuard.Health.DOWN, TOOK, false);
    assertEquals(HostGuard.Refusal.BREAKER_OPEN, guard.admit(dead, false));
  }
}
