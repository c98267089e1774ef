package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Operation;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Review (secrets): HostGuard.hostKey falls back to {@code uri.getAuthority()} when java.net.URI
 * finds no server-based host (a host with an underscore, such as {@code payments_api}); the
 * authority includes the user info. That "host" is the circuit breaker's and retry budget's key,
 * the {@code host} of every {@link IdemEvent.AttemptFinished}/{@code BreakerRejected} (which apps
 * log), the Micrometer tag {@code idem.breaker.transitions{host=...}}, and the journaled reason
 * and exception message "circuit breaker open for ...". The user info check does not stop it
 * (getRawUserInfo() is null for such a URI).
 */
class ReviewHostLabelUserInfoTest {
  @Test
  void theHostLabelOfEventsNeverCarriesThePassword() throws Exception {
    List<IdemEvent> events = new CopyOnWriteArrayList<>();
    Harness h = new Harness(Harness.POLICY, b -> b.listener(events::add));
    Operation op = Operation.builder("create-order",
        Requests.postJson("http://svc:qzPLANThostpw@payments_api:8080/v1/orders", "{}")).build();
    try {
      h.executor.execute(op, h.transport(op).then(status(201)));
    } catch (IllegalArgumentException refused) {
      assertTrue(h.journal.find(op.id()).isEmpty(), "refused, but journaled");
      return;
    }
    assertTrue(events.stream().anyMatch(e -> e instanceof IdemEvent.AttemptFinished), "events: " + events);
    for (IdemEvent e : events) {
      if (e instanceof IdemEvent.AttemptFinished f) {
        assertFalse(f.host().toLowerCase(java.util.Locale.ROOT).contains("qzplanthostpw"), "the event's host label carries the password: " + f.host());
      }
    }
  }
}
