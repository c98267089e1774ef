package dev.idem.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.spi.Admission;
import dev.idem.server.CapturedResponse;
import dev.idem.server.GuardRequest;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.core.testing.VirtualTime;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The operator's numbers as meters: records by state, stuck, oldest age, conflicts, mismatches, takeovers. */
class MicrometerGuardMetricsTest {
  private final VirtualTime time = new VirtualTime();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  static GuardRequest post(String key, String json) {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of(key), "alice",
        GuardRequest.BodyReader.of(json.getBytes(StandardCharsets.UTF_8)));
  }

  private double gauge(String name, String... tags) {
    return registry.get(name).tags(tags).gauge().value();
  }

  private double count(String name) {
    return registry.get(name).counter().count();
  }

  @Test
  void theGuardsNumbersReachTheRegistry() throws Exception {
    InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    MicrometerGuardMetrics metrics = MicrometerGuardMetrics.bind(registry, store, time.clock(), Duration.ZERO);
    try (IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler()).storeExecutor(Runnable::run)
        .purgeInterval(null).listener(metrics).build()) {
      Admission.Proceed done = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k1", "{}")));
      time.advance(Duration.ofMillis(250));
      guard.complete(done.claim(), CapturedResponse.json(201, "{}"));
      assertEquals(1, registry.get("idem.server.processing").tags("result", "stored").timer().count());
      assertEquals(250, registry.get("idem.server.processing").tags("result", "stored").timer()
          .totalTime(java.util.concurrent.TimeUnit.MILLISECONDS));
      guard.admit(post("k1", "{}")); // replay
      guard.admit(post("k1", "{\"other\":1}")); // mismatch
      assertInstanceOf(Admission.Proceed.class, guard.admit(post("k2", "{}")));
      guard.admit(post("k2", "{}")); // conflict
      time.advance(Duration.ofSeconds(5));
      Admission.Proceed stalled = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k3", "{}")));
      time.jump(Duration.ofSeconds(40)); // no renewal ran: k2 and k3 are stuck

      assertEquals(2, gauge("idem.server.records", "state", "in_flight"));
      assertEquals(1, gauge("idem.server.records", "state", "completed"));
      assertEquals(0, gauge("idem.server.records", "state", "released"));
      assertEquals(2, gauge("idem.server.records.stuck"));
      assertEquals(45, gauge("idem.server.inflight.oldest.age"));

      assertInstanceOf(Admission.Proceed.class, guard.admit(post("k3", "{}"))); // takeover
      assertEquals(1, count("idem.server.replays"));
      assertEquals(1, count("idem.server.mismatches"));
      assertEquals(1, count("idem.server.conflicts"));
      assertEquals(1, count("idem.server.takeovers"));
      assertTrue(stalled.claim().generation() == 1);
    }
  }

  /**
   * Seed 000's retention evidence: the oldest unexpired key, the purge lag, and what the purge
   * deleted, so that a purge that stopped shows before the store fills.
   */
  @Test
  void theOldestUnexpiredKeyThePurgeLagAndThePurgesReachTheRegistry() throws Exception {
    InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    MicrometerGuardMetrics metrics = MicrometerGuardMetrics.bind(registry, store, time.clock(), Duration.ZERO);
    try (IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler()).storeExecutor(Runnable::run)
        .retention(Duration.ofHours(1)).purgeInterval(null).listener(metrics).build()) {
      assertEquals(0, gauge("idem.server.records.oldest.age"), "nothing stored");
      assertEquals(0, gauge("idem.server.purge.lag"));
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k1", "{}")));
      guard.complete(first.claim(), CapturedResponse.json(201, "{}"));
      time.advance(Duration.ofMinutes(20));
      Admission.Proceed second = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k2", "{}")));
      guard.complete(second.claim(), CapturedResponse.json(201, "{}"));
      time.advance(Duration.ofMinutes(10));

      assertEquals(30 * 60, gauge("idem.server.records.oldest.age"), "k1, claimed 30 minutes ago");
      assertEquals(0, gauge("idem.server.purge.lag"), "nothing is past retention yet");

      time.advance(Duration.ofMinutes(35)); // k1 expired 5 minutes ago, and no purge ran
      assertEquals(45 * 60, gauge("idem.server.records.oldest.age"), "k2 is now the oldest key honoured");
      assertEquals(5 * 60, gauge("idem.server.purge.lag"), "k1 has waited 5 minutes for the purge");
      assertEquals(0, count("idem.server.purged"));

      assertEquals(1, guard.purgeExpired());
      assertEquals(1, count("idem.server.purged"));
      assertEquals(0, gauge("idem.server.purge.lag"), "the purge caught up");
      assertEquals(45 * 60, gauge("idem.server.records.oldest.age"));
    }
  }

  @Test
  void aFailingBackgroundPurgeIsCounted() throws Exception {
    InMemoryIdempotencyStore real = new InMemoryIdempotencyStore();
    IdempotencyStore store = (IdempotencyStore) Proxy.newProxyInstance(IdempotencyStore.class.getClassLoader(),
        new Class<?>[] {IdempotencyStore.class}, (p, m, args) -> {
          if (m.getName().equals("purgeExpired")) {
            throw new IdempotencyStoreException("disk full", null);
          }
          return m.invoke(real, args);
        });
    MicrometerGuardMetrics metrics = MicrometerGuardMetrics.bind(registry, store, time.clock(), Duration.ZERO);
    try (IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler()).storeExecutor(Runnable::run)
        .purgeInterval(Duration.ofMinutes(10)).listener(metrics).build()) {
      time.advance(Duration.ofMinutes(25));
      assertEquals(2, count("idem.server.purge.failures"), "two purges ran, both failed");
      assertEquals(0, count("idem.server.purged"));
      assertTrue(guard.lastPurgeFailure().isPresent());
    }
  }

  @Test
  void oneStoreReadServesEveryGaugeWithinTheRefreshAndAFailingStoreReadsNaN() {
    InMemoryIdempotencyStore real = new InMemoryIdempotencyStore();
    int[] reads = new int[1];
    AtomicBoolean down = new AtomicBoolean();
    IdempotencyStore store = (IdempotencyStore) Proxy.newProxyInstance(IdempotencyStore.class.getClassLoader(),
        new Class<?>[] {IdempotencyStore.class}, (p, m, args) -> {
          if (m.getName().equals("stats")) {
            reads[0]++;
            if (down.get()) {
              throw new IdempotencyStoreException("down", null);
            }
          }
          return m.invoke(real, args);
        });
    MicrometerGuardMetrics.bind(registry, store, time.clock());
    for (int i = 0; i < 3; i++) {
      gauge("idem.server.records", "state", "in_flight");
      gauge("idem.server.records.stuck");
      gauge("idem.server.inflight.oldest.age");
    }
    assertEquals(1, reads[0], "9 gauge reads, one query");
    down.set(true);
    time.advance(Duration.ofSeconds(10));
    assertTrue(Double.isNaN(gauge("idem.server.records.stuck")));
    assertEquals(2, reads[0]);
  }
}
