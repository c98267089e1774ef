package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.Operation;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A blocking transport that throws an Error (an AssertionError in a custom Transport, a
 * NoClassDefFoundError for a codec missing at run time) on the half-open breaker's probe: the Error
 * leaves SyncDriver.drive before the loop hears of it, so the permission HostGuard.admit gave is
 * never recorded nor released. The async driver gives it back (loop.interrupted); the sync one
 * does not, and the breaker stays HALF_OPEN with no permission: every later execute to that host is
 * refused and never sent, though the host answers.
 */
class SyncTransportErrorOnProbeTest {

  @Test
  void aTransportErrorOnTheProbeDoesNotLeaveTheBreakerShutForGood() throws Exception {
    CircuitBreakerSettings breaker = CircuitBreakerSettings.builder().slidingWindowSize(2).minimumCalls(2)
        .openFor(Duration.ofSeconds(10)).halfOpenProbes(1).build();
    RetryPolicy once = RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofSeconds(5)).build();
    Harness h = new Harness(once, b -> b.circuitBreaker(breaker).retryBudget(RetryBudget.unlimited()));
    for (int i = 1; i <= 2; i++) {
      Operation down = Operation.builder("create-order", Requests.order("{\"amount\":" + i + "}")).build();
      ScriptedTransport t = new ScriptedTransport(h.time).then(status(503));
      assertThrows(OperationFailedException.class, () -> h.executor.execute(down, t));
    }
    h.time.advance(Duration.ofMillis(10_001));

    Operation probe = Operation.builder("create-order", Requests.order("{\"amount\":3}")).build();
    AtomicInteger probeSends = new AtomicInteger();
    Transport broken = (request, key) -> {
      probeSends.incrementAndGet();
      throw new AssertionError("codec invariant broken");
    };
    assertThrows(AssertionError.class, () -> h.executor.execute(probe, broken));
    assertEquals(1, probeSends.get());

    Operation next = Operation.builder("create-order", Requests.order("{\"amount\":4}")).build();
    ScriptedTransport nextT = new ScriptedTransport(h.time).otherwise(status(201));
    Throwable told = null;
    try {
      h.executor.execute(next, nextT);
    } catch (Throwable t) {
      told = t;
    }
    assertEquals(1, nextT.count(), "the probe's half-open permission was never given back after the transport's"
        + " Error: a later operation to a host that answers is never sent (journal: " + h.state(next)
        + "; probe left " + h.state(probe) + "; caller told: " + told + ")");
    assertEquals(OperationState.SUCCEEDED, h.state(next));
  }
}
