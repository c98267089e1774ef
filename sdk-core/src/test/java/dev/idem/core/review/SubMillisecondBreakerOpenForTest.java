package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code CircuitBreakerSettings.openFor} accepts any positive Duration (its Javadoc: "positive"),
 * but the per-host resilience4j breaker is built lazily, at the first attempt to a host, and
 * resilience4j refuses a wait in the open state below 1 ms. A setting the builder accepted then
 * throws in the middle of the first call, after the operation was journaled and claimed: nothing
 * is sent, an undocumented IllegalArgumentException escapes, and the operation is left IN_FLIGHT
 * under a lease with no attempt recorded.
 *
 * <p>Either answer keeps the guarantee: the builder refusing such a setting (before any operation
 * exists), or the first call working. The smallest period resilience4j takes (1 ms) must work.
 */
class SubMillisecondBreakerOpenForTest {

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aSubMillisecondOpenPeriodTheBuilderAcceptedDoesNotBreakTheFirstCall(Driver d) throws Exception {
    CircuitBreakerSettings breaker;
    try {
      breaker = CircuitBreakerSettings.builder().openFor(Duration.ofNanos(500_000)).build();
    } catch (IllegalArgumentException refused) {
      return; // refused when configured, before any operation exists: fine
    }
    Harness h = new Harness(Harness.POLICY, b -> b.circuitBreaker(breaker));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":1}")).build();
    ScriptedTransport t = h.transport(op).then(status(201));

    Throwable escaped = null;
    try {
      d.run(h, op, t);
    } catch (Throwable e) {
      escaped = e;
    }

    OperationRecord r = h.record(op);
    assertNotEquals(OperationState.IN_FLIGHT, r.state(),
        "the operation was journaled and claimed, then the breaker settings the builder accepted threw "
            + escaped + "; it is left IN_FLIGHT under a lease with " + r.attempts().size() + " attempts recorded");
    assertEquals(1, t.count(), "the request was never sent: " + escaped);
    assertEquals(OperationState.SUCCEEDED, r.state());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void theShortestOpenPeriodTheBreakerTakesServesTheFirstCall(Driver d) throws Exception {
    CircuitBreakerSettings breaker = CircuitBreakerSettings.builder().openFor(Duration.ofMillis(1)).build();
    Harness h = new Harness(Harness.POLICY, b -> b.circuitBreaker(breaker));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":1}")).build();
    ScriptedTransport t = h.transport(op).then(status(201));

    d.run(h, op, t);

    assertEquals(1, t.count());
    assertEquals(OperationState.SUCCEEDED, h.record(op).state());
  }
}
