package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.webhooks.metrics.MicrometerWebhookMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: the webhook inbox had no storage meter. {@code idem.storage.size{store=inbox}} now
 * measures its SQLite database and -wal files, or its PostgreSQL tables.
 */
class InboxStorageSizeGaugeTest {
  private static final String PADDING = "x".repeat(1000);

  /** Accepts 200 events of about 1 KB each: the inbox grows by at least 200 KB. */
  private static double growth(WebhookInbox inbox) {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    MicrometerWebhookMetrics.bind(registry, inbox);
    double before = registry.get("idem.storage.size").tag("store", "inbox").gauge().value();
    for (int n = 0; n < 200; n++) {
      byte[] body = ("{\"n\":" + n + ",\"pad\":\"" + PADDING + "\"}").getBytes(StandardCharsets.UTF_8);
      assertEquals(AcceptResult.ACCEPTED, inbox.accept(new VerifiedWebhook("acme", "evt_" + n, "order.paid", null,
          Instant.ofEpochMilli(1000 + n), body, new byte[] {(byte) (n >> 8), (byte) n, 7})));
    }
    double after = registry.get("idem.storage.size").tag("store", "inbox").gauge().value();
    assertTrue(after >= before + 200 * PADDING.length(), "grew from " + before + " to " + after + " bytes");
    return after;
  }

  @Test
  void theEmbeddedInboxsGaugeIsItsDatabaseAndWalFilesAndGrowsWithEvents(@TempDir Path dir) throws Exception {
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      double after = growth(inbox);
      assertEquals(Files.size(dir.resolve("inbox.db")) + Files.size(dir.resolve("inbox.db-wal")), after);
    }
  }

  @Nested
  @ExtendWith(PostgresExtension.class)
  class OnPostgres {
    @Test
    void theGaugeIsTheInboxsTablesAndGrowsWithEvents(PgDatabase db) {
      try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).open()) {
        growth(inbox);
      }
    }
  }
}
