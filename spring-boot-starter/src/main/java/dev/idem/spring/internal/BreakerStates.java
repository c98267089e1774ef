package dev.idem.spring.internal;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.event.IdemListener;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/** The last state of each host's circuit breaker, as the executor's events tell it, for the health indicator. Thread-safe. */
public final class BreakerStates implements IdemListener {
  private final Map<String, String> states = new ConcurrentHashMap<>();

  @Override
  public void onEvent(IdemEvent event) {
    if (event instanceof IdemEvent.BreakerStateChanged c) {
      states.put(c.host(), c.to());
    }
  }

  /** Hosts whose breaker is not CLOSED, with its state, sorted by host. */
  public Map<String, String> notClosed() {
    Map<String, String> out = new TreeMap<>();
    states.forEach((host, state) -> {
      if (!"CLOSED".equalsIgnoreCase(state)) {
        out.put(host, state);
      }
    });
    return out;
  }
}
