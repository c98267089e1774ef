package dev.idem.webhooks.internal;

import static dev.idem.webhooks.internal.BackgroundErrors.UNEXPECTED;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.webhooks.internal.ReviewWatchdogDoubleBeatTest.HandScheduler;
import dev.idem.webhooks.support.InboxStatements;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * LeaseHeartbeat, the same race as {@link ReviewWatchdogDoubleBeatTest}: a heartbeat whose task had
 * already started when the last run's {@code end()} cancelled it, and that takes the lock only after
 * a new run's {@code begin()} scheduled a fresh one, must neither renew nor reschedule; else two
 * chains renew every lease twice per period, twice the writes on the inbox for as long as something
 * runs. Hand-driven scheduler; the renewals counted as the store's write transactions.
 */
class LeaseHeartbeatDoubleBeatTest {
  @TempDir
  Path dir;

  @Test
  void aHeartbeatStartedAsTheLastRunEndedDoesNotDoubleTheRenewals() throws Exception {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve("inbox.db"));
    InboxStatements.run(sqlite, (store, recording) -> {
      Clock clock = Clock.fixed(Instant.ofEpochMilli(2000), ZoneOffset.UTC);
      List<ClaimedEvent> claimed = store.claim(2, "p1", 2000, 2000 + 180_000);
      assertEquals(2, claimed.size(), "the inbox's first two events are due");
      HandScheduler s = new HandScheduler();
      LeaseHeartbeat h = new LeaseHeartbeat(store, clock, s, Duration.ofMinutes(3), UNEXPECTED); // a heartbeat a minute
      recording.writeCommits.set(0);

      h.begin(claimed.get(0));
      Runnable started = s.tasks.get(0); // the executor has just picked this heartbeat up...
      h.end(claimed.get(0));             // ...when the last run ends and cancels it (too late to stop it)
      h.begin(claimed.get(1));           // a new run schedules a fresh heartbeat
      started.run();                     // the started heartbeat now takes the lock and runs to its end

      int chains = s.pending();
      s.period();
      s.period();
      s.period();
      int renewals = recording.writeCommits.get();
      h.end(claimed.get(1));
      h.close();
      assertEquals(1, chains, "one heartbeat chain while something runs");
      assertEquals(3, renewals, "one renewal a period, three periods (the stale heartbeat renews nothing)");
      assertEquals(0, s.pending(), "no heartbeat once nothing runs");
    });
  }
}
