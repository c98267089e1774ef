package dev.idem.webhooks.internal;

import static dev.idem.webhooks.internal.BackgroundErrors.UNEXPECTED;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
      LeaseHeartbeat h = new LeaseHeartbeat(store, clock, s, Duration.ofMinutes(3), UNEXPECTED); // a heartbeat a minute
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

  /**
   * Review (rv-whgap): keep() renews the lease at once, not from the next beat: an abandoned lease
   * may end before that beat (an event claimed between two beats), and another processor claimed it
   * in the gap. Review (rvtoday): at once on the scheduler, never on the caller's thread, whose
   * close() must not wait for the inbox before it stops claiming.
   */
  @Test
  void keepRenewsTheLeaseAtOnceOnTheSchedulerNotAtTheNextBeat() throws Exception {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve("inbox.db"));
    InboxStatements.run(sqlite, (store, recording) -> {
      VirtualTime time = new VirtualTime(Instant.ofEpochMilli(170_000)); // 10 s before the lease ends
      List<ClaimedEvent> claimed = store.claim(1, "p1", 2000, 2000 + 180_000);
      LeaseHeartbeat h = new LeaseHeartbeat(store, time.clock(), time.scheduler(), Duration.ofMinutes(3), UNEXPECTED);
      h.begin(claimed.get(0));  // its next beat a minute from now
      h.abandon(claimed.get(0));

      h.keep(claimed.get(0));
      assertEquals(List.of(182_000L), leasesUntil(sqlite), "no write on the caller's thread");
      time.runDueTasks();  // what is due now, not a beat later
      assertEquals(List.of(350_000L), leasesUntil(sqlite), "renewed at once, to a lease from now");
      h.close();
    });
  }

  /** A lease another processor took over after it lapsed stays that processor's: keep() does not take it back. */
  @Test
  void keepLeavesALeaseAnotherProcessorTookOverToIt() throws Exception {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve("inbox.db"));
    InboxStatements.run(sqlite, (store, recording) -> {
      Clock clock = Clock.fixed(Instant.ofEpochMilli(190_000), ZoneOffset.UTC);
      ClaimedEvent mine = store.claim(1, "p1", 2000, 2000 + 180_000).get(0);
      HandScheduler s = new HandScheduler();
      LeaseHeartbeat h = new LeaseHeartbeat(store, clock, s, Duration.ofMinutes(3), UNEXPECTED);
      h.begin(mine);
      h.abandon(mine);
      ClaimedEvent theirs = store.claim(1, "p2", 185_000, 185_000 + 180_000).get(0); // after the lapse
      assertEquals(mine.eventId(), theirs.eventId());

      h.keep(mine);
      s.period();
      h.close();
      assertEquals(List.of(), leasesUntil(sqlite), "nothing of p1's");
      assertEquals(List.of(365_000L), leasesUntil(sqlite, "p2"), "p2's lease as p2 took it");
    });
  }

  /**
   * The processor's close() waits for the at-once renewal before it shuts down the scheduler it
   * owns, which would drop a task not run yet: awaitKeptRenewals returns once it ran, the lease
   * renewed, and within its bound when it does not run.
   */
  @Test
  void awaitKeptRenewalsReturnsOnceTheRenewalRanAndAtItsBoundOtherwise() throws Exception {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve("inbox.db"));
    InboxStatements.run(sqlite, (store, recording) -> {
      VirtualTime time = new VirtualTime(Instant.ofEpochMilli(170_000));
      List<ClaimedEvent> claimed = store.claim(2, "p1", 2000, 2000 + 180_000);
      LeaseHeartbeat h = new LeaseHeartbeat(store, time.clock(), time.scheduler(), Duration.ofMinutes(3), UNEXPECTED);
      h.begin(claimed.get(0));
      h.abandon(claimed.get(0));
      h.keep(claimed.get(0));
      h.close();  // the close that follows: no beat from now on, the kept renewal still owed

      CompletableFuture<Void> waited = CompletableFuture.runAsync(() -> h.awaitKeptRenewals(Duration.ofMinutes(1)),
          r -> new Thread(r, "closing").start());
      time.runDueTasks();  // the scheduler gets to it: the kept renewal (the beat was cancelled)
      waited.get(30, TimeUnit.SECONDS);
      assertEquals(List.of(350_000L, 182_000L), leasesUntil(sqlite), "the kept lease renewed, the other untouched");

      h.begin(claimed.get(1));
      h.abandon(claimed.get(1));
      h.keep(claimed.get(1));  // closed: nothing scheduled, nothing to wait for
      h.awaitKeptRenewals(Duration.ZERO);
      assertEquals(0, time.pendingTasks(), time.pendingTasks() + " tasks left");
    });
  }

  private static List<Long> leasesUntil(SQLiteDataSource sqlite) throws Exception {
    return leasesUntil(sqlite, "p1");
  }

  private static List<Long> leasesUntil(SQLiteDataSource sqlite, String owner) throws Exception {
    List<Long> out = new ArrayList<>();
    try (Connection c = sqlite.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT lease_until FROM idem_webhook_inbox WHERE lease_owner = '" + owner + "'"
            + " ORDER BY event_id")) {
      while (rs.next()) {
        out.add(rs.getLong(1));
      }
    }
    return out;
  }
}
