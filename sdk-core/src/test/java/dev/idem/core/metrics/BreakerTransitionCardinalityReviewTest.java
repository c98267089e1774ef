package dev.idem.core.metrics;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationFailedException;
import dev.idem.core.RetryPolicy;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** Review (observe): what the client's Micrometer binder reports, against what the journal and the docs say. */
class BreakerTransitionCardinalityReviewTest {
  private final VirtualTime time = new VirtualTime();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private static Operation op(String uri, int n) {
    return Operation.builder("notify", Requests.postJson(uri, "{\"n\":" + n + "}")).build();
  }

  /**
   * The class doc: "Meters are tagged by operation name, never by key, scope or anything from a
   * request, so their number stays bounded by the number of operation names". HostGuard is built
   * for an unbounded stream of hosts (per-customer callback URLs: it drops idle breakers past
   * 10,000), but idem.breaker.transitions is tagged by the request's host, and neither the
   * registry nor the binder's counter cache ever drops one: one operation name, 300 callback
   * hosts that went down once, 300 meters (plus a cached Counter each) kept forever.
   */
  @Test
  void breakerTransitionMetersStayBoundedByOperationNamesNotByCallbackHosts() throws Exception {
    InMemoryJournal journal = new InMemoryJournal();
    MicrometerMetrics metrics = MicrometerMetrics.bind(registry, journal, time.clock());
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .listener(metrics).retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build())
        .circuitBreaker(CircuitBreakerSettings.builder().minimumCalls(2).slidingWindowSize(2).build()).build();
    FakeHost down = new FakeHost(time, FakeHost.always(503));
    int hosts = 300;
    int n = 0;
    for (int h = 0; h < hosts; h++) {
      String uri = "https://shop-" + h + ".example.com/hooks/order";
      for (int i = 0; i < 2; i++) {
        Operation o = op(uri, n++);
        assertThrows(OperationFailedException.class, () -> idem.execute(o, down));
      }
    }
    int transitionMeters = registry.find("idem.breaker.transitions").counters().size();
    int operationNames = 1;
    assertTrue(transitionMeters <= 3 * operationNames,
        "one operation name, yet " + transitionMeters + " idem.breaker.transitions meters, one per callback host");
  }
}
