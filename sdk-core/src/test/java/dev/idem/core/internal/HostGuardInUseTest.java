package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.Classification;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A breaker counted in use is never dropped, so every path out of admit, record and release must
 * count its caller out again, the ones that throw too: a count left behind would keep that host's
 * breaker in the map for good, one more per failing call, and the guard would no longer be bounded.
 */
class HostGuardInUseTest {
  private final VirtualTime time = new VirtualTime();

  @Test
  void aBudgetThatThrowsInAdmitLeavesTheBreakerDroppable() {
    RetryBudget throwing = new RetryBudget() {
      @Override public boolean tryAcquireRetry(String host) {
        throw new IllegalStateException("app budget broke");
      }

      @Override public void onSuccess(String host) {
        throw new IllegalStateException("app budget broke");
      }
    };
    HostGuard guard = new HostGuard(CircuitBreakerSettings.ofDefaults(), throwing, time.clock(), e -> {});
    String host = "retried.example.com:443";
    assertThrows(IllegalStateException.class, () -> guard.admit(host, true));
    assertEquals(HostGuard.Refusal.NONE, guard.admit(host, false));
    // The budget's throw on a success is logged and ignored; the breaker is counted out before it.
    guard.record(host, Classification.SUCCESS, HostGuard.Health.UP, Duration.ofMillis(5), false);
    guard.release(host);

    time.advance(HostGuard.IDLE_AFTER.plusMinutes(1));
    guard.admit("other.example.com:443", false);   // a new host: the minute's sweep runs
    assertEquals(1, guard.hostsHeld(), "the idle, empty breaker of " + host + " was kept");
  }

  @Test
  void aListenerErrorInRecordLeavesTheBreakerDroppableOnceItClosesAgain() {
    CircuitBreakerSettings settings = CircuitBreakerSettings.builder().minimumCalls(2).slidingWindowSize(2)
        .openFor(Duration.ofSeconds(30)).halfOpenProbes(1).build();
    HostGuard guard = new HostGuard(settings, RetryBudget.unlimited(), time.clock(), e -> {
      throw new AssertionError("listener broke");
    });
    String host = "flaky.example.com:443";
    guard.admit(host, false);
    guard.record(host, Classification.SAFE, HostGuard.Health.DOWN, Duration.ofMillis(5), false);
    guard.admit(host, false);
    // Opens it: the listener's Error passes on, out of record.
    assertThrows(AssertionError.class,
        () -> guard.record(host, Classification.SAFE, HostGuard.Health.DOWN, Duration.ofMillis(5), false));
    time.advance(Duration.ofSeconds(31));
    // Half-opens it (the listener throws again), then the probe's success closes it (and again).
    assertThrows(AssertionError.class, () -> guard.admit(host, false));
    assertThrows(AssertionError.class,
        () -> guard.record(host, Classification.SUCCESS, HostGuard.Health.UP, Duration.ofMillis(5), false));
    assertEquals(HostGuard.Refusal.NONE, guard.admit(host, false));
    guard.release(host);

    time.advance(HostGuard.IDLE_AFTER.plusMinutes(1));
    guard.admit("other.example.com:443", false);
    assertEquals(1, guard.hostsHeld(), "the idle, closed, empty breaker of " + host + " was kept");
  }
}
