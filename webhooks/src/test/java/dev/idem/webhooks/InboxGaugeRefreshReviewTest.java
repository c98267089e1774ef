package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
import dev.idem.webhooks.metrics.MicrometerWebhookMetrics;
import dev.idem.webhooks.support.InboxStatements;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * The refresh of the inbox gauges, timed by the inbox's clock: a wall clock that steps back (NTP)
 * and refreshes too long for {@link Instant#plus}.
 */
class InboxGaugeRefreshReviewTest {
  static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  @TempDir
  Path dir;

  /** The inbox's clock: a virtual time, shifted by an offset that a test can step back, as NTP does. */
  static final class SteppedClock extends Clock {
    final VirtualTime time;
    volatile Duration offset = Duration.ZERO;

    SteppedClock(VirtualTime time) {
      this.time = time;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Instant instant() {
      return time.now().plus(offset);
    }
  }

  @Test
  void aClockSteppedBackDoesNotFreezeTheGaugesForLongerThanTheRefresh() throws Exception {
    InboxStatements.run(sqlite("back.db"), (store, ds) -> {
      VirtualTime time = new VirtualTime(NOW);
      SteppedClock clock = new SteppedClock(time);
      MeterRegistry registry = new SimpleMeterRegistry();
      MicrometerWebhookMetrics.bind(registry, WebhookInbox.over(store, clock));
      assertEquals(3, queue(registry), "three events queued");

      clock.offset = Duration.ofHours(-1); // NTP steps the wall clock back an hour
      store.insert("acme", "evt_3", "order.paid", new byte[] {3}, List.of(), false, "{}".getBytes(StandardCharsets.UTF_8),
          null, 2000);
      time.advance(Duration.ofSeconds(30)); // three refreshes of 10 s pass
      assertEquals(4, queue(registry), "30 s after the clock stepped back an hour, three times the 10 s refresh,"
          + " the queue gauge still serves the reading taken before the step (it will until the clock catches up"
          + " with it, an hour later)");
    });
  }

  @Test
  void aZeroRefreshReadsAtEveryGaugeEvenAfterTheClockStepsBack() throws Exception {
    InboxStatements.run(sqlite("zero-back.db"), (store, ds) -> {
      VirtualTime time = new VirtualTime(NOW);
      SteppedClock clock = new SteppedClock(time);
      MeterRegistry registry = new SimpleMeterRegistry();
      MicrometerWebhookMetrics.bind(registry, WebhookInbox.over(store, clock), Duration.ZERO);
      assertEquals(3, queue(registry), "three events queued");

      clock.offset = Duration.ofSeconds(-1);
      store.insert("acme", "evt_3", "order.paid", new byte[] {3}, List.of(), false, "{}".getBytes(StandardCharsets.UTF_8),
          null, 2000);
      assertEquals(4, queue(registry), "with Duration.ZERO documented as 'reads at every gauge', a clock one"
          + " second behind the last reading serves that reading instead");
    });
  }

  @Test
  void aRefreshTooLongForTheClockServesTheFirstReadingRatherThanNaN() throws Exception {
    InboxStatements.run(sqlite("forever.db"), (store, ds) -> {
      VirtualTime time = new VirtualTime(NOW);
      MeterRegistry registry = new SimpleMeterRegistry();
      // "Read once": bind accepts it (it is not negative), so it must work.
      MicrometerWebhookMetrics.bind(registry, WebhookInbox.over(store, time.clock()),
          Duration.ofSeconds(Long.MAX_VALUE));
      assertEquals(3, queue(registry), "the first reading");
      time.advance(Duration.ofSeconds(1));
      assertEquals(3, queue(registry), "bind accepted the refresh, yet the second read of the gauge overflows"
          + " readAt.plus(refresh) and the gauge reads NaN from then on");
    });
  }

  private static double queue(MeterRegistry registry) {
    return registry.get("idem.webhooks.inbox.queue").gauge().value();
  }

  private SQLiteDataSource sqlite(String file) {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve(file));
    return sqlite;
  }
}
