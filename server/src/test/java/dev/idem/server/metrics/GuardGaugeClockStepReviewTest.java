package dev.idem.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.spi.Admission;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/**
 * Review (observe): MicrometerGuardMetrics.read serves its last reading until
 * {@code now >= readAt + refresh}. When the wall clock steps back (an NTP correction, a VM
 * restored from a snapshot), readAt is in the future and the reading is served for the whole step
 * plus the refresh: an hour's step freezes every server gauge (records, stuck claims, processing
 * age) for an hour. MicrometerWebhookMetrics was fixed for exactly this ("A reading also ends
 * when the inbox's clock steps back"); the guard's binder was not.
 */
class GuardGaugeClockStepReviewTest {
  /** A wall clock that can be stepped both ways, as the system clock can. */
  static final class WallClock extends Clock {
    volatile Instant now = VirtualTime.DEFAULT_START;

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  @Test
  void aClockSteppedBackDoesNotFreezeTheGuardGauges() throws Exception {
    WallClock wall = new WallClock();
    VirtualTime time = new VirtualTime();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    MicrometerGuardMetrics metrics = MicrometerGuardMetrics.bind(registry, store, wall);  // 10 s refresh
    try (IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(wall).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(null).listener(metrics).build()) {
      assertEquals(0.0, registry.get("idem.server.records").tags("state", "in_flight").gauge().value());

      wall.now = wall.now.minus(Duration.ofHours(1));  // NTP steps the clock back an hour
      assertInstanceOf(Admission.Proceed.class, guard.admit(MicrometerGuardMetricsTest.post("k1", "{}")));
      wall.now = wall.now.plus(Duration.ofMinutes(5));  // five minutes later, on the corrected clock

      assertEquals(1.0, registry.get("idem.server.records").tags("state", "in_flight").gauge().value(),
          "a claim has been in flight for five minutes; the gauge still serves the reading from before the step");
    }
  }
}
