package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * Defect: past the cap, HostGuard drops an open breaker whose period ended IDLE_AFTER ago
 * (dropOpen) without telling the listener. Its last word on the host stays {@code OPEN}. When the
 * host comes back it gets a fresh CLOSED breaker, whose calls succeed without any change of state,
 * so no event ever corrects it: the Spring starter's {@code BreakerStates} (last BreakerStateChanged
 * per host, the health endpoint's {@code openBreakers}) shows the healthy host as OPEN for the rest
 * of the process's life. Under the cap the same host is told OPEN -> HALF_OPEN -> CLOSED.
 */
class ReviewDroppedOpenBreakerStaysOpenToListenersTest {
  private static final Duration TOOK = Duration.ofMillis(20);
  private final VirtualTime time = new VirtualTime();

  private static void open(HostGuard guard, String host) {
    for (int i = 0; i < 2; i++) {
      assertEquals(HostGuard.Refusal.NONE, guard.admit(host, false), host);
      guard.record(host, Classification.SAFE, HostGuard.Health.DOWN, TOOK, false);
    }
    assertEquals(HostGuard.Refusal.BREAKER_OPEN, guard.admit(host, false), host);
  }

  private static void succeed(HostGuard guard, String host) {
    assertEquals(HostGuard.Refusal.NONE, guard.admit(host, false), host);
    guard.record(host, Classification.SUCCESS, HostGuard.Health.UP, TOOK, false);
  }

  @Test
  void aHostWhoseOpenBreakerWasDroppedAndThatRecoveredIsNotReportedOpenForever() {
    Duration openFor = Duration.ofMinutes(1);
    CircuitBreakerSettings settings = CircuitBreakerSettings.builder().minimumCalls(2).slidingWindowSize(2)
        .openFor(openFor).halfOpenProbes(1).build();
    // What the Spring starter's BreakerStates keeps: the last state each host was told to be in.
    Map<String, String> lastState = new ConcurrentHashMap<>();
    HostGuard guard = new HostGuard(settings, RetryBudget.unlimited(), time.clock(), e -> {
      if (e instanceof IdemEvent.BreakerStateChanged c) {
        lastState.put(c.host(), c.to());
      }
    }, 10);
    String flaky = "flaky.example.com:443";
    open(guard, flaky);
    for (int i = 0; i < 20; i++) {
      open(guard, "other-dead-" + i + ".example.com:443");
    }
    assertEquals("OPEN", lastState.get(flaky));
    time.advance(openFor.plus(HostGuard.IDLE_AFTER).plusMinutes(1));
    succeed(guard, "new.example.com:443"); // brings the sweep past the cap: the open breakers go
    assertTrue(guard.hostsHeld() <= 10, "held " + guard.hostsHeld());

    // The host is back up: every call to it is admitted and succeeds.
    for (int i = 0; i < 50; i++) {
      succeed(guard, flaky);
    }
    assertNotEquals("OPEN", lastState.get(flaky),
        "the host's breaker is gone and the host is served normally, yet the listener (health endpoint's"
            + " openBreakers) was last told OPEN and nothing will ever correct it");
  }
}
