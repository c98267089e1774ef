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
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A retry budget whose onSuccess throws an Error (an AssertionError, a NoClassDefFoundError for a
 * metrics library missing at run time) on the half-open breaker's probe: HostGuard.record catches
 * only a RuntimeException from the budget, so the breaker is never told how the probe ended and its
 * half-open permission is never given back (AttemptLoop.record cleared 'admitted' before calling
 * the guard, so the safety net does not release it either). The breaker stays HALF_OPEN with no
 * permission left: every later call to that host is refused and never sent, though the host is up.
 */
class SafetyNetBudgetErrorBreakerTest {

  /** Throws an AssertionError the first time it is told of a success, then behaves. */
  static final class OnceBrokenBudget implements RetryBudget {
    volatile boolean armed;

    @Override
    public boolean tryAcquireRetry(String host) {
      return true;
    }

    @Override
    public void onSuccess(String host) {
      if (armed) {
        armed = false;
        throw new AssertionError("budget invariant broken");
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aBudgetErrorOnTheProbesSuccessDoesNotLeaveTheBreakerShutForGood(Driver d) throws Exception {
    OnceBrokenBudget budget = new OnceBrokenBudget();
    CircuitBreakerSettings breaker = CircuitBreakerSettings.builder().slidingWindowSize(2).minimumCalls(2)
        .openFor(Duration.ofSeconds(10)).halfOpenProbes(1).build();
    RetryPolicy once = RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofSeconds(5)).build();
    Harness h = new Harness(once, b -> b.circuitBreaker(breaker).retryBudget(budget));

    // Two refusals by a host that is down open the breaker.
    for (int i = 1; i <= 2; i++) {
      Operation down = Operation.builder("create-order", Requests.order("{\"amount\":" + i + "}")).build();
      ScriptedTransport t = new ScriptedTransport(h.time).then(status(503));
      assertThrows(OperationFailedException.class, () -> d.run(h, down, t));
    }
    h.time.advance(Duration.ofMillis(10_001));

    // The half-open probe is answered 201; the budget throws an Error when told of that success.
    budget.armed = true;
    Operation probe = Operation.builder("create-order", Requests.order("{\"amount\":3}")).build();
    ScriptedTransport probeT = new ScriptedTransport(h.time).then(status(201));
    assertThrows(Throwable.class, () -> d.run(h, probe, probeT));
    assertEquals(1, probeT.count());

    // The host is up and the budget behaves again: the next operation must reach it.
    Operation next = Operation.builder("create-order", Requests.order("{\"amount\":4}")).build();
    ScriptedTransport nextT = new ScriptedTransport(h.time).otherwise(status(201));
    Throwable told = null;
    try {
      d.run(h, next, nextT);
    } catch (Throwable t) {
      told = t;
    }
    assertEquals(1, nextT.count(), "the breaker's half-open permission taken by the probe was never given back:"
        + " a later operation to a host that answers is never sent (journal: " + h.state(next) + ", caller told: "
        + told + ")");
    assertEquals(OperationState.SUCCEEDED, h.state(next));
  }
}
