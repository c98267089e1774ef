package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.Explain;
import dev.idem.jdbc.support.FaultyDataSource;
import dev.idem.webhooks.internal.ClaimedEvent;
import dev.idem.webhooks.internal.InboxStore;
import dev.idem.webhooks.metrics.MicrometerWebhookMetrics;
import dev.idem.webhooks.support.InboxStatements;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * What a scrape of the inbox's gauges costs the inbox. On SQLite every read runs on the one
 * connection that accepts deliveries, so a gauge's read holds accepts back for as long as it takes.
 * The gauges used to run a count by state over the whole table for each of the queue and the dead
 * letters, at every read: that counted every DONE event too (kept until {@link
 * WebhookInbox#purgeDone}, most of a long-running inbox), twice per scrape, and with a backlog (a
 * handler down for a day) every queued event as well, so the metrics slowed the endpoint most
 * during an outage. Asked with statement counts and EXPLAIN QUERY PLAN, not timed. {@link
 * PostgresInboxGaugeReadTest} asks PostgreSQL the same.
 */
class InboxGaugeReadTest {
  static final Instant NOW = Instant.ofEpochMilli(61_002);
  static final String[] GAUGES = {"idem.webhooks.inbox.queue", "idem.webhooks.inbox.oldest.age",
      "idem.webhooks.deadletters"};

  @TempDir
  Path dir;

  @Test
  void aScrapeReadsNoDoneEvent() throws Exception {
    SQLiteDataSource sqlite = sqlite("plan.db");
    List<String> reads = firstScrape(sqlite);
    try (Connection c = sqlite.getConnection()) {
      for (String sql : reads) {
        List<String> plan = Explain.plan(c, sql);
        assertFalse(plan.stream().anyMatch(step -> step.startsWith("SCAN idem_webhook_inbox")),
            "a gauge's read goes through every event of the inbox, DONE ones included: " + plan + " for " + sql);
        assertFalse(plan.stream().anyMatch(step -> step.contains("TEMP B-TREE")),
            "a gauge's read sorts what it reads: " + plan + " for " + sql);
      }
    }
  }

  @Test
  void scrapesWithinTheRefreshShareOneReading() throws Exception {
    refreshes(sqlite("refresh.db"));
  }

  @Test
  void aZeroRefreshReadsTheInboxAtEveryGauge() throws Exception {
    InboxStatements.run(sqlite("zero.db"), (store, ds) -> {
      MeterRegistry registry = new SimpleMeterRegistry();
      WebhookInbox inbox = WebhookInbox.over(store, new VirtualTime(NOW).clock());
      assertThrows(IllegalArgumentException.class,
          () -> MicrometerWebhookMetrics.bind(registry, inbox, Duration.ofSeconds(-1)));
      MicrometerWebhookMetrics.bind(registry, inbox, Duration.ZERO);
      ds.statements.clear();
      assertScrape(registry, 3, 60.002, 0, "three events queued, the oldest since 1000 ms");
      assertEquals(6, selects(ds), "each of the three gauges took a reading of its own");
    });
  }

  @Test
  void countsOfSomeStatesHaveEveryStateAskedForAndNoOther() throws Exception {
    InboxStatements.run(sqlite("counts.db"), (store, ds) -> {
      settle(store);
      WebhookInbox inbox = WebhookInbox.over(store, new VirtualTime(NOW).clock());
      assertEquals(Map.of(InboxState.PENDING, 1L, InboxState.PROCESSING, 0L, InboxState.DEAD, 1L),
          inbox.counts(EnumSet.of(InboxState.DEAD, InboxState.PROCESSING, InboxState.PENDING)));
      assertEquals(Map.of(InboxState.PENDING, 1L, InboxState.PROCESSING, 0L, InboxState.DEAD, 1L,
          InboxState.DONE, 1L), inbox.counts(), "every state");
      assertEquals(1, inbox.queueLength());
      ds.statements.clear();
      assertEquals(Map.of(), inbox.counts(EnumSet.noneOf(InboxState.class)));
      assertEquals(0, selects(ds), "no state, no read");
    });
  }

  private SQLiteDataSource sqlite(String file) {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve(file));
    return sqlite;
  }

  /**
   * Scrapes the gauges once, on an inbox on {@code dataSource} holding one DONE, one DEAD and one
   * PENDING event, and checks what they read.
   *
   * @return the statements on the inbox's table that the scrape ran
   */
  static List<String> firstScrape(DataSource dataSource) throws Exception {
    List<String> reads = new ArrayList<>();
    InboxStatements.run(dataSource, (store, ds) -> {
      settle(store);
      MeterRegistry registry = new SimpleMeterRegistry();
      MicrometerWebhookMetrics.bind(registry, WebhookInbox.over(store, new VirtualTime(NOW).clock()));
      ds.executedSql.clear();
      assertScrape(registry, 1, 60, 1, "evt_2 queued since 1002 ms, evt_1 dead; evt_0, DONE, counts nowhere");
      ds.executedSql.stream().filter(sql -> sql.contains("idem_webhook_inbox")).forEach(reads::add);
    });
    assertFalse(reads.isEmpty(), "the scrape read nothing");
    return reads;
  }

  /**
   * On the same inbox as {@link #firstScrape}: scrapes twice within the default refresh (10 s), with
   * one more event accepted between them, then once after it, and counts the reads.
   */
  static void refreshes(DataSource dataSource) throws Exception {
    VirtualTime time = new VirtualTime(NOW);
    InboxStatements.run(dataSource, (store, ds) -> {
      settle(store);
      MeterRegistry registry = new SimpleMeterRegistry();
      MicrometerWebhookMetrics.bind(registry, WebhookInbox.over(store, time.clock()));
      ds.statements.clear();
      ds.executedSql.clear();

      assertScrape(registry, 1, 60, 1, "the first scrape");
      assertEquals(2, selects(ds), "one reading serves the three gauges, one count and the oldest queued event,"
          + " rather than a count per gauge: " + ds.executedSql);
      store.insert("acme", "evt_3", "order.paid", new byte[] {3}, List.of(), false, "{}".getBytes(StandardCharsets.UTF_8),
          null, NOW.toEpochMilli());
      ds.statements.clear();
      time.advance(Duration.ofSeconds(5));
      assertScrape(registry, 1, 65, 1, "a scrape within the refresh serves the first one's reading, and the"
          + " age keeps growing");
      assertEquals(0, selects(ds), "a scrape within the refresh reads nothing");
      time.advance(Duration.ofSeconds(5));
      assertScrape(registry, 2, 70, 1, "after the refresh, the new event counts");
      assertEquals(2, selects(ds), "each refresh reads once");
    });
  }

  /** Claims evt_0 and makes it DONE, then claims evt_1 and makes it DEAD; evt_2 stays PENDING. */
  private static void settle(InboxStore store) {
    long now = NOW.toEpochMilli();
    ClaimedEvent done = store.claim(1, "test", now, now + 60_000).get(0);
    store.markDone(done, now);
    ClaimedEvent dead = store.claim(1, "test", now, now + 60_000).get(0);
    store.markDead(dead, now, "invalid", "permanent");
  }

  private static void assertScrape(MeterRegistry registry, double queue, double oldestAge, double dead,
      String what) {
    double[] values = new double[GAUGES.length];
    for (int i = 0; i < GAUGES.length; i++) {
      values[i] = registry.get(GAUGES[i]).gauge().value();
    }
    assertAll(what,
        () -> assertEquals(queue, values[0], "queue"),
        () -> assertEquals(oldestAge, values[1], 0.001, "oldest age, seconds"),
        () -> assertEquals(dead, values[2], "dead letters"));
  }

  private static int selects(FaultyDataSource ds) {
    AtomicInteger n = ds.statements.get("SELECT");
    return n == null ? 0 : n.get();
  }
}
