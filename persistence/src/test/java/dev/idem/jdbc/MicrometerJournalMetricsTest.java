package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: the journal's storage had no meter. {@code idem.storage.size{store=journal}} now
 * measures it: the SQLite database and -wal files, or the journal's PostgreSQL tables.
 */
class MicrometerJournalMetricsTest {
  private static final String PADDING = "x".repeat(1000);

  /** Begins 200 operations of about 1 KB each: the journal grows by at least 200 KB. */
  private static void write200(JdbcJournal journal) throws Exception {
    Ops ops = new Ops(7);
    for (int i = 0; i < 200; i++) {
      journal.begin(ops.newOp("{\"n\":" + i + ",\"pad\":\"" + PADDING + "\"}"));
    }
  }

  private static Gauge gauge(SimpleMeterRegistry registry) {
    return registry.get("idem.storage.size").tag("store", "journal").gauge();
  }

  @Test
  void theEmbeddedJournalsGaugeIsItsDatabaseAndWalFilesAndGrowsWithWrites(@TempDir Path tmp) throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Path dir = tmp.resolve("journal");
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      MicrometerJournalMetrics.bind(registry, journal);
      double before = gauge(registry).value();

      write200(journal);

      double after = gauge(registry).value();
      assertTrue(after >= before + 200 * PADDING.length(), "grew from " + before + " to " + after + " bytes");
      long files = Files.size(dir.resolve("idem-journal.db")) + Files.size(dir.resolve("idem-journal.db-wal"));
      assertEquals(files, after, "the database file and its -wal file");
    }
  }

  @Nested
  @ExtendWith(PostgresExtension.class)
  class OnPostgres {
    @Test
    void theGaugeIsTheJournalsTablesAndGrowsWithWrites(PgDatabase db) throws Exception {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      try (JdbcJournal journal = JdbcJournal.dataSource(db.dataSource()).open()) {
        MicrometerJournalMetrics.bind(registry, journal);
        double before = gauge(registry).value();
        assertTrue(before > 0, "the empty tables and their indexes take pages: " + before);

        write200(journal);

        double after = gauge(registry).value();
        assertTrue(after >= before + 200 * PADDING.length(), "grew from " + before + " to " + after + " bytes");
      }
    }
  }
}
