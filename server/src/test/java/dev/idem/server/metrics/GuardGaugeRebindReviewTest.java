package dev.idem.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.spi.Admission;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Review (observe): a guard whose store is closed and replaced (reopened), bound again on the
 * same registry. StorageSizeGauge.register and MicrometerWebhookMetrics.bind remove the gauges of
 * the earlier bind for this reason; MicrometerGuardMetrics.bind does not, so Micrometer hands it
 * the gauges of the first bind, which keep reading (and strongly holding) the first store.
 */
class GuardGaugeRebindReviewTest {
  @Test
  void boundAgainTheRecordGaugesReadTheStoreOfTheLastBind() throws Exception {
    VirtualTime time = new VirtualTime();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    InMemoryIdempotencyStore first = new InMemoryIdempotencyStore();
    MicrometerGuardMetrics.bind(registry, first, time.clock(), Duration.ZERO);
    first.close();

    InMemoryIdempotencyStore second = new InMemoryIdempotencyStore();
    MicrometerGuardMetrics metrics = MicrometerGuardMetrics.bind(registry, second, time.clock(), Duration.ZERO);
    try (IdempotencyGuard guard = IdempotencyGuard.builder(second).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(null).listener(metrics).build()) {
      assertInstanceOf(Admission.Proceed.class, guard.admit(MicrometerGuardMetricsTest.post("k1", "{}")));
      assertEquals(1.0, registry.get("idem.server.records").tags("state", "in_flight").gauge().value(),
          "the store in use holds one claim in flight");
    }
  }
}
