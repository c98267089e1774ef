package dev.idem.spring.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.event.IdemEvent;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * BreakerStates holds only the hosts whose breaker is not closed: a host whose breaker closed
 * again, after probes or by being forgotten (OPEN straight to CLOSED), is forgotten too, so the
 * map is bounded by the executor's non-closed breakers, not by every host that ever went down.
 */
class BreakerStatesTest {
  private static void tell(BreakerStates states, String host, String from, String to) {
    states.onEvent(new IdemEvent.BreakerStateChanged(host, from, to));
  }

  @Test
  void hostsWhoseBreakerClosedAgainAreNotHeld() {
    BreakerStates states = new BreakerStates();
    for (int i = 0; i < 10_000; i++) {
      String host = "flaky-" + i + ".example.com:443";
      tell(states, host, "CLOSED", "OPEN");
      tell(states, host, "OPEN", "HALF_OPEN");
      tell(states, host, "HALF_OPEN", "CLOSED");
    }
    for (int i = 0; i < 10_000; i++) {
      String host = "dropped-" + i + ".example.com:443";
      tell(states, host, "CLOSED", "OPEN");
      tell(states, host, "OPEN", "CLOSED");   // the guard forgot the open breaker
    }
    tell(states, "down.example.com:443", "CLOSED", "OPEN");
    tell(states, "probing.example.com:443", "CLOSED", "OPEN");
    tell(states, "probing.example.com:443", "OPEN", "HALF_OPEN");

    assertEquals(Map.of("down.example.com:443", "OPEN", "probing.example.com:443", "HALF_OPEN"),
        states.notClosed());
    assertEquals(2, states.held(), "every host that ever went down is still held");
  }

  @Test
  void aHostThatGoesDownAgainIsShownAgain() {
    BreakerStates states = new BreakerStates();
    String host = "api.example.com:443";
    tell(states, host, "CLOSED", "OPEN");
    tell(states, host, "OPEN", "CLOSED");
    assertEquals(Map.of(), states.notClosed());
    tell(states, host, "CLOSED", "OPEN");
    assertEquals(Map.of(host, "OPEN"), states.notClosed());
    assertEquals(1, states.held());
  }
}
