package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The guard's breakers and the token bucket's buckets stay bounded over many hosts, and what they
 * drop is only what a new breaker or bucket would hold: an open host stays refused, a depleted
 * budget stays depleted, however many other hosts pass by.
 */
class HostGuardBoundTest {
  private static final Duration TOOK = Duration.ofMillis(20);
  private final VirtualTime time = new VirtualTime();

  private static void succeed(HostGuard guard, String host) {
    assertEquals(HostGuard.Refusal.NONE, guard.admit(host, false), host);
    guard.record(host, Classification.SUCCESS, HostGuard.Health.UP, TOOK, false);
  }

  private static void fail(HostGuard guard, String host) {
    assertEquals(HostGuard.Refusal.NONE, guard.admit(host, false), host);
    guard.record(host, Classification.SAFE, HostGuard.Health.DOWN, TOOK, false);
  }

  @Test
  void anOpenHostStaysRefusedWhileThousandsOfOthersPassTheCap() {
    CircuitBreakerSettings settings = CircuitBreakerSettings.builder().minimumCalls(2).slidingWindowSize(2)
        .openFor(Duration.ofHours(2)).build();
    HostGuard guard = new HostGuard(settings, RetryBudget.unlimited(), time.clock(), e -> {}, 10);
    String down = "down.example.com:443";
    fail(guard, down);
    fail(guard, down);
    assertEquals(HostGuard.Refusal.BREAKER_OPEN, guard.admit(down, false));

    // 6,000 healthy hosts over 100 minutes, far past the cap of 10 and past IDLE_AFTER: every
    // sweep, idle and cap-driven, runs with the open breaker in the map and never called.
    for (int i = 0; i < 6_000; i++) {
      succeed(guard, "tenant-" + i + ".example.com:443");
      time.advance(Duration.ofSeconds(1));
    }
    assertEquals(HostGuard.Refusal.BREAKER_OPEN, guard.admit(down, false), "the open host was forgotten");
    assertTrue(guard.untilProbe(down).compareTo(Duration.ZERO) > 0);
    // Past the cap, empty breakers go once unused for MIN_IDLE: a sweep leaves the open one and
    // about a minute of hosts, and the map may grow by half that again before the next.
    assertTrue(guard.hostsHeld() <= (1 + 61) * 3 / 2 + 1, "held " + guard.hostsHeld());
  }

  @Test
  void aClosedBreakerHoldingAFailureIsKeptUnderTheCapAndItsHostStillOpensOnTheNextFailure() {
    CircuitBreakerSettings settings = CircuitBreakerSettings.builder().minimumCalls(2).slidingWindowSize(2).build();
    HostGuard guard = new HostGuard(settings, RetryBudget.unlimited(), time.clock(), e -> {}, 10_000);
    String flaky = "flaky.example.com:443";
    fail(guard, flaky);
    for (int i = 0; i < 3_000; i++) {   // 50 minutes of other hosts, well under the cap
      succeed(guard, "tenant-" + i + ".example.com:443");
      time.advance(Duration.ofSeconds(1));
    }
    fail(guard, flaky);   // the window still held the first failure: two of two opens it
    assertEquals(HostGuard.Refusal.BREAKER_OPEN, guard.admit(flaky, false));
    assertTrue(guard.hostsHeld() <= 600 + 61 + 2, "held " + guard.hostsHeld());
  }

  @Test
  void aHostInUseKeepsItsBreakerAndOneIdleForLongGetsAFreshOne() {
    CircuitBreakerSettings settings = CircuitBreakerSettings.builder().minimumCalls(2).slidingWindowSize(2).build();
    HostGuard guard = new HostGuard(settings, RetryBudget.unlimited(), time.clock(), e -> {}, 10_000);
    String busy = "busy.example.com:443";
    String quiet = "quiet.example.com:443";
    succeed(guard, quiet);
    for (int i = 0; i < 1_200; i++) {   // 20 minutes: busy is called every second, quiet never
      succeed(guard, busy);
      succeed(guard, "tenant-" + i + ".example.com:443");
      time.advance(Duration.ofSeconds(1));
    }
    assertTrue(guard.hostsHeld() <= 600 + 61 + 1, "held " + guard.hostsHeld());
    // busy's breaker is the one it had all along: its window is full of successes, so one failure
    // is half of it and opens it; a fresh one would have needed two.
    guard.record(busy, Classification.SAFE, HostGuard.Health.DOWN, TOOK, false);
    assertEquals(HostGuard.Refusal.BREAKER_OPEN, guard.admit(busy, false));
  }

  @Test
  void fullBucketsAreDroppedAndADepletedOneIsNeverForgotten() {
    // No refill: the depleted bucket can only be filled by successes, so it must stay.
    TokenBucketRetryBudget budget = new TokenBucketRetryBudget(10, 5, 1, 0.0, time.clock(), 10);
    String down = "down.example.com:443";
    assertTrue(budget.tryAcquireRetry(down));
    assertTrue(budget.tryAcquireRetry(down));
    assertEquals(0.0, budget.tokens(down));
    for (int i = 0; i < 5_000; i++) {
      String host = "tenant-" + i + ".example.com:443";
      budget.onSuccess(host);
      if (i % 7 == 0) {
        assertTrue(budget.tryAcquireRetry(host));   // spent, then earned back by the retry's success
        budget.onRetrySuccess(host);
      }
      time.advance(Duration.ofSeconds(1));
    }
    assertTrue(budget.tryAcquireRetry("other.example.com:443"));
    assertEquals(false, budget.tryAcquireRetry(down), "the depleted host got a fresh budget");
    assertEquals(0.0, budget.tokens(down));
    assertTrue(budget.hostsHeld() <= 10 + 2, "held " + budget.hostsHeld());
  }
}
