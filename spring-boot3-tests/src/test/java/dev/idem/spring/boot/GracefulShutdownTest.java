package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.spring.client.IdempotencyInterceptor;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.http.RequestEntity;

/**
 * Closing the app (what SIGTERM does) drains the outbox before the executor and the journal close:
 * queued operations whose deliveries are still on the wire are delivered and recorded SUCCEEDED,
 * and the journal closes cleanly (it opens read-only afterwards with every outcome in it).
 */
class GracefulShutdownTest {
  @Test
  void closingTheAppDeliversWhatIsQueuedAndRecordsIt(@TempDir Path dir) throws Exception {
    try (IdempotentServer server = IdempotentServer.start()) {
      // Each delivery is on the wire for a while when the app is told to stop.
      server.plan().forNext(3, Fault.slowProcessing(Duration.ofMillis(700)));
      ConfigurableApplicationContext app = new SpringApplicationBuilder(TestApp.class).properties(
          "server.port=0",
          "idem.directory=" + dir.resolve("idem"),
          "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
          "idem.server.store=datasource",
          "idem.outbox.operations=create-order",
          "idem.outbox.workers=3", "idem.shutdown-timeout=5s").run();
      IdempotencyInterceptor idem = app.getBean(IdempotencyInterceptor.class);
      List<IdempotencyKey> keys = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        IdempotencyKey key = IdempotencyKey.generate();
        keys.add(key);
        idem.enqueue("create-order", key, RequestEntity.post(server.url("/orders"))
            .contentType(MediaType.APPLICATION_JSON).body("{\"n\":" + i + "}"));
      }
      app.close();

      try (JdbcJournal journal = JdbcJournal.openReadOnly(dir.resolve("idem").resolve("journal"))) {
        for (IdempotencyKey key : keys) {
          assertEquals(1, server.effectCount(key.value()), "delivered once: " + key);
          OperationState state = journal.find(new OperationId(OperationId.DEFAULT_SCOPE, "create-order", key))
              .orElseThrow().state();
          assertEquals(OperationState.SUCCEEDED, state, "recorded before the journal closed: " + key);
        }
      }
    }
  }
}
