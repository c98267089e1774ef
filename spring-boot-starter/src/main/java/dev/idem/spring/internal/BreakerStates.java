package dev.idem.spring.internal;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.event.IdemListener;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The last state of each host's circuit breaker, as the executor's events tell it, for the health
 * indicator. Thread-safe.
 *
 * <p>Bounded: only hosts whose breaker is not closed are held. A host whose breaker closes again,
 * after its probes or because the executor forgot the open breaker (told as OPEN to CLOSED, see
 * {@link IdemEvent.BreakerStateChanged}), is forgotten here too, as a closed host is shown the same
 * as one never seen. The map is thus no larger than the executor's breakers that are not closed,
 * which the executor itself keeps bounded, rather than every host that ever went down.
 */
public final class BreakerStates implements IdemListener {
  private static final String CLOSED = "CLOSED";
  private final Map<String, String> states = new ConcurrentHashMap<>();

  @Override
  public void onEvent(IdemEvent event) {
    if (event instanceof IdemEvent.BreakerStateChanged c) {
      if (CLOSED.equalsIgnoreCase(c.to())) {
        states.remove(c.host());
      } else {
        states.put(c.host(), c.to());
      }
    }
  }

  /** Hosts held now; for tests. */
  int held() {
    return states.size();
  }

  /** Hosts whose breaker is not CLOSED, with its state, sorted by host. */
  public Map<String, String> notClosed() {
    return new TreeMap<>(states);
  }
}
