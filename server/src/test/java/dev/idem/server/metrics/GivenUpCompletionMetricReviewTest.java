package dev.idem.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.CapturedResponse;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.IdempotencyStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Review (observe): the guard's binder promises to count "results that could not be stored
 * (unknown outcomes)" (idem.server.processing{result=refused}: "the lease was lost and the
 * handler's result not stored, so its outcome is unknown to a retry"). A completion whose store
 * call keeps failing is tried again for one lease, then given up (CompletionRetries.giveUp): the
 * lease runs out, the result was never stored, and a retry of the key runs the handler a second
 * time. giveUp ends with ended.accept(null), so no GuardEvent.Completed is emitted and no meter
 * moves: during a store outage, the very moment handlers are run twice, the metric an operator
 * alerts on reads 0 (only an ERROR log line says it).
 */
class GivenUpCompletionMetricReviewTest {
  @Test
  void aCompletionGivenUpIsCountedAsAnUnknownOutcome() throws Exception {
    VirtualTime time = new VirtualTime();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    InMemoryIdempotencyStore real = new InMemoryIdempotencyStore();
    AtomicBoolean down = new AtomicBoolean();
    IdempotencyStore store = (IdempotencyStore) Proxy.newProxyInstance(IdempotencyStore.class.getClassLoader(),
        new Class<?>[] {IdempotencyStore.class}, (p, m, args) -> {
          if (down.get() && m.getName().equals("complete")) {
            throw new IdempotencyStoreException("connection reset", null);
          }
          try {
            return m.invoke(real, args);
          } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
          }
        });
    MicrometerGuardMetrics metrics = MicrometerGuardMetrics.bind(registry, store, time.clock(), Duration.ZERO);
    try (IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(null).listener(metrics).build()) {
      Admission.Proceed p = assertInstanceOf(Admission.Proceed.class,
          guard.admit(MicrometerGuardMetricsTest.post("k1", "{}")));
      down.set(true);  // the store goes down while the handler runs
      assertThrows(IdempotencyStoreException.class, () -> guard.complete(p.claim(), CapturedResponse.json(201, "{}")));
      time.advance(Duration.ofMinutes(10));  // well past the lease: the retries gave up

      // The handler's result was never stored; a retry of k1 now runs it again.
      down.set(false);
      assertInstanceOf(Admission.Proceed.class, guard.admit(MicrometerGuardMetricsTest.post("k1", "{}")));

      double takeovers = registry.get("idem.server.takeovers").counter().count();
      double ended = registry.find("idem.server.processing").timers().stream().mapToDouble(t -> t.count()).sum();
      assertEquals(1.0, registry.get("idem.server.processing").tags("result", "refused").timer().count(),
          "a completion given up is an unknown outcome; claims ended as counted by idem.server.processing: " + ended + ", takeovers (only once a retry came): " + takeovers);
    }
  }
}
