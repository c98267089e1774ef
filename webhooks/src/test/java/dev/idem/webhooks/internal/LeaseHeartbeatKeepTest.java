package dev.idem.webhooks.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.webhooks.internal.ReviewWatchdogDoubleBeatTest.HandScheduler;
import dev.idem.webhooks.support.InboxStatements;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * LeaseHeartbeat.keep(): a run whose handler closed the processor after its maximum run time passed
 * is renewed again, whichever comes first: the handler's keep(), or the watchdog's abandon() (the
 * watchdog tells the heartbeat after its beat released its lock, so that call may land after the
 * handler's close() took the run out of its limit). Hand-driven scheduler; the renewals read from the
 * inbox's leases.
 */
class LeaseHeartbeatKeepTest {
  @TempDir
  Path dir;

  @Test
  void aKeptRunIsRenewedWhetherItsAbandonCameBeforeOrAfter() throws Exception {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve("inbox.db"));
    InboxStatements.run(sqlite, (store, recording) -> {
      Clock clock = Clock.fixed(Instant.ofEpochMilli(62_000), ZoneOffset.UTC); // a minute after the claim
      List<ClaimedEvent> claimed = store.claim(2, "p1", 2000, 2000 + 180_000);
      assertEquals(2, claimed.size(), "the inbox's first two events are due");
      HandScheduler s = new HandScheduler();
      LeaseHeartbeat h = new LeaseHeartbeat(store, clock, s, Duration.ofMinutes(3)); // a heartbeat a minute
      h.begin(claimed.get(0));
      h.begin(claimed.get(1));

      h.abandon(claimed.get(0)); // the limit passed, then the handler closed the processor
      h.keep(claimed.get(0));
      h.keep(claimed.get(1)); // the handler closed the processor, then the watchdog's word came
      h.abandon(claimed.get(1));
      s.period();
      h.close();
      assertEquals(List.of(242_000L, 242_000L), leasesUntil(sqlite), "both leases renewed again, to a lease from now");
    });
  }

  private static List<Long> leasesUntil(SQLiteDataSource sqlite) throws Exception {
    List<Long> out = new ArrayList<>();
    try (Connection c = sqlite.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT lease_until FROM idem_webhook_inbox WHERE lease_owner = 'p1'"
            + " ORDER BY event_id")) {
      while (rs.next()) {
        out.add(rs.getLong(1));
      }
    }
    return out;
  }
}
