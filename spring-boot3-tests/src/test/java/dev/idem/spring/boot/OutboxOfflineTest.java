package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.spring.autoconfigure.OutboxCustomizer;
import dev.idem.spring.client.IdempotencyInterceptor;
import dev.idem.testkit.IdempotentServer;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.http.RequestEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Queued delivery through the starter while the target is offline: an operation queued with the
 * interceptor is tried by the app's outbox poll after poll against a port where nothing listens
 * (connection refused, so nothing can have reached a server) and stays PENDING with its key, never
 * FAILED; once the server is back on that port, the outbox delivers it once, under that key. The
 * outage is seconds long, not hours: the outbox polls every 100 ms to 500 ms here (an
 * {@link OutboxCustomizer}, as an app would set it) so that the test waits in real time on a
 * running app; the hours-long outage, with virtual time, is the core's (docs/offline.md).
 *
 * <p>The operation's first round is the default retry policy's five attempts with full jitter
 * (delays drawn from 0 to 200 ms, 400 ms, 800 ms, 1.6 s), and the next round is due after its
 * {@code maxDelay} (10 s). The offline phase therefore watches for at least 5 s and until it has
 * seen four journal updates, up to 30 s: on a loaded machine the 20 ms samples can miss updates
 * that a short jitter drew close together, and the CI run on 2026-12-06 saw only three in 5 s.
 */
@SpringBootTest(classes = {TestApp.class, OutboxOfflineTest.FastPolls.class}, properties = {
    "idem.server.store=datasource",
    "idem.outbox.operations=create-order"})
class OutboxOfflineTest {
  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    registry.add("idem.directory", () -> StarterTest.DIR.resolve("idem-outbox-offline").toString());
    // A database of its own: the guard opens its SQLite store once per JVM.
    registry.add("spring.datasource.url", () -> "jdbc:sqlite:" + StarterTest.DIR.resolve("outbox-offline.db"));
  }

  @TestConfiguration
  static class FastPolls {
    @Bean
    OutboxCustomizer fastPolls() {
      return b -> b.pollInterval(Duration.ofMillis(100)).maxPollInterval(Duration.ofMillis(500));
    }
  }

  @Autowired
  IdempotencyInterceptor interceptor;
  @Autowired
  IdempotentExecutor executor;

  @Test
  void aQueuedOperationWaitsOutAnOutageAndIsDeliveredOnceUnderItsKey() throws Exception {
    int port;
    try (IdempotentServer probe = IdempotentServer.start()) {
      port = probe.url("/").getPort(); // a free port, then nothing listens on it
    }
    URI target = URI.create("http://127.0.0.1:" + port + "/orders");
    IdempotencyKey key = IdempotencyKey.generate();
    OperationId id = interceptor.enqueue("create-order", key, RequestEntity.post(target)
        .contentType(MediaType.APPLICATION_JSON).body("{\"item\":\"offline\"}"));

    // Offline: each round leases the operation, tries it and gives it back; it is never ended
    // (FAILED, UNCERTAIN) while the target is unreachable.
    long start = System.nanoTime();
    long minimum = start + TimeUnit.SECONDS.toNanos(5);
    long end = start + TimeUnit.SECONDS.toNanos(30);
    java.util.Set<java.time.Instant> updates = new java.util.HashSet<>();
    while (System.nanoTime() < end && (System.nanoTime() < minimum || updates.size() < 4)) {
      OperationRecord during = executor.find(id).orElseThrow();
      assertTrue(during.state() == OperationState.PENDING || during.state() == OperationState.IN_FLIGHT,
          "offline is a state, not a failure: " + during);
      assertTrue(during.attempts().stream().noneMatch(a -> a.mayHaveTakenEffect()),
          "connection refused: no attempt can have reached a server");
      updates.add(during.updatedAt());
      Thread.sleep(20); // the outbox polls on its own threads
    }
    assertTrue(updates.size() >= 4, "tried again and again while offline: " + updates.size() + " journal updates");

    try (IdempotentServer back = IdempotentServer.builder().port(port).start()) {
      assertTrue(back.awaitEffects(key.value(), 1, Duration.ofSeconds(30)), "delivered once the server is back");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      OperationRecord after = executor.find(id).orElseThrow();
      while (after.state() != OperationState.SUCCEEDED) {
        assertTrue(System.nanoTime() < deadline, "not SUCCEEDED: " + after);
        Thread.sleep(50);
        after = executor.find(id).orElseThrow();
      }
      assertEquals(1, back.effectCount(key.value()), "one effect");
      assertEquals(1, back.requestCount(), "one request once it was back");
      assertEquals(key.value(), back.recordedRequests().get(0).keyHeader().orElseThrow());
    }
  }
}
