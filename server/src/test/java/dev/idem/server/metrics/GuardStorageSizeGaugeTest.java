package dev.idem.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.CapturedResponse;
import dev.idem.server.GuardRequest;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.spi.Admission;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: the guard's store had no storage meter. {@code idem.storage.size{store=guard}} now
 * measures its SQLite database and -wal files.
 */
class GuardStorageSizeGaugeTest {
  private static final String PADDING = "x".repeat(1000);

  @Test
  void theGuardsStorageGaugeGrowsWithStoredResults(@TempDir Path dir) throws Exception {
    VirtualTime time = new VirtualTime();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Path file = dir.resolve("guard.db");
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(file);
        IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
            .purgeInterval(null).listener(MicrometerGuardMetrics.bind(registry, store, time.clock(), Duration.ZERO))
            .build()) {
      double before = registry.get("idem.storage.size").tag("store", "guard").gauge().value();

      for (int i = 0; i < 200; i++) {
        GuardRequest post = new GuardRequest("POST", "/orders", null, "application/json", List.of("k" + i), "alice",
            GuardRequest.BodyReader.of(("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
        Admission.Proceed proceed = assertInstanceOf(Admission.Proceed.class, guard.admit(post));
        guard.complete(proceed.claim(), CapturedResponse.json(201, "{\"pad\":\"" + PADDING + "\"}"));
      }

      double after = registry.get("idem.storage.size").tag("store", "guard").gauge().value();
      assertTrue(after >= before + 200 * PADDING.length(), "grew from " + before + " to " + after + " bytes");
      assertEquals(Files.size(file) + Files.size(dir.resolve("guard.db-wal")), after, "the database and -wal files");
    }
  }
}
