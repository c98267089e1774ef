package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Review: HostGuard keeps one resilience4j CircuitBreaker (its own config, a 20-slot window, its
 * state machine: about 3.5 KB measured) per host key it has ever seen, in a map that is never
 * pruned, and the default token-bucket budget does the same with its buckets. A client that calls
 * many distinct hosts (a multi-tenant integration with one subdomain per customer, a webhook-style
 * sender) grows the executor's heap by a few KB per host for the life of the process, even when
 * every call succeeded and the breaker has nothing worth remembering: 100,000 tenants is ~350 MB.
 */
class HostGuardForgetsNothingReviewTest {
  @Test
  void healthyHostsSeenOnceAreNotRetainedForever() throws Exception {
    VirtualTime time = new VirtualTime();
    TokenBucketRetryBudget budget = (TokenBucketRetryBudget) RetryBudget.tokenBucket(time.clock());
    HostGuard guard = new HostGuard(CircuitBreakerSettings.ofDefaults(), budget, time.clock(), e -> {});
    int hosts = 20_000;
    for (int i = 0; i < hosts; i++) {
      String host = "tenant-" + i + ".api.example.com:443";
      guard.admit(host, false);
      guard.record(host, Classification.SUCCESS, HostGuard.Health.UP, Duration.ofMillis(20), false);
      time.advance(Duration.ofSeconds(1));   // one call per host, spread over ~5.5 hours
    }

    int retained = guard.hostsHeld();
    assertTrue(retained < hosts, "every one of " + hosts + " healthy hosts, each called once hours ago, still holds"
        + " a circuit breaker: " + retained + " retained (~3.5 KB each), and the map is never pruned");
    assertTrue(budget.hostsHeld() < hosts, "every healthy host keeps a full retry-budget bucket: "
        + budget.hostsHeld() + " retained");
  }
}
