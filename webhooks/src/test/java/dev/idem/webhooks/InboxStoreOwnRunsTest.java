package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.webhooks.internal.ClaimedEvent;
import dev.idem.webhooks.internal.EventKey;
import dev.idem.webhooks.internal.InboxStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The inbox's statements for a processor's own runs, on both databases: a claim that leaves out
 * the events the processor runs (expired lease or PENDING alike), a renewal fenced by the lease
 * generation, a release that hands an event back uncounted or counted, and the count of runs
 * without an outcome.
 */
@ExtendWith(PostgresExtension.class)
class InboxStoreOwnRunsTest {
  private static final byte[] BODY = "{}".getBytes(StandardCharsets.UTF_8);

  @TempDir
  Path dir;

  @Test
  void onSqlite() {
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      check(inbox.store());
    }
  }

  @Test
  void onPostgres(PgDatabase db) {
    try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).open()) {
      check(inbox.store());
    }
  }

  private static void check(InboxStore s) {
    s.insert("acme", "x", "t", digest("x"), List.of(), false, BODY, null, 100);
    s.insert("acme", "y", "t", digest("y"), List.of(), false, BODY, null, 101);
    s.insert("acme", "z", "t", digest("z"), List.of(), false, BODY, null, 102);
    ClaimedEvent x = s.claim(1, "p1", 1000, 1000, 2000, Set.of()).get(0);
    assertEquals("x", x.eventId());

    // x's lease lapsed at 2000; y and z are PENDING. Leaving out x (expired) and y (pending): z only.
    List<ClaimedEvent> took = s.claim(10, "p1", 3000, 3000, 4000, Set.of(EventKey.of(x), new EventKey("acme", "y")));
    assertEquals(List.of("z"), took.stream().map(ClaimedEvent::eventId).toList());
    assertTrue(s.markDone(took.get(0), 3000));

    // The renewal takes x's lapsed lease back: nobody claimed it meanwhile.
    assertEquals(List.of(), s.renew(List.of(x), 5000));
    assertEquals(List.of(), s.claim(10, "p2", 4500, 4500, 9000, Set.of(new EventKey("acme", "y"))),
        "x's lease runs to 5000 now");

    // Another processor takes x after its lease lapsed: x's renewal is refused, and so is its release.
    ClaimedEvent x2 = s.claim(10, "p2", 6000, 6000, 7000, Set.of(new EventKey("acme", "y"))).get(0);
    assertEquals("x", x2.eventId());
    assertEquals(List.of(x), s.renew(List.of(x), 8000));
    assertFalse(s.release(x, 6500, "closed"));

    // p2's run of x is handed back uncounted, due at once; its first attempt's start forgotten only
    // if it was the first.
    assertTrue(s.release(x2, 6500, "closed"));
    ClaimedEvent x3 = s.claim(10, "p3", 6500, 6500, 9000, Set.of(new EventKey("acme", "y"))).get(0);
    assertEquals("x", x3.eventId());
    assertEquals(2, x3.attempts(), "p1's run counted, p2's released one not");
    assertEquals(1000, x3.firstAttemptAtMs(), "the first attempt was p1's");
    ClaimedEvent y = s.claim(10, "p3", 6500, 6500, 9000, Set.of()).get(0);
    assertTrue(s.release(y, 6600, "closed"));
    ClaimedEvent y2 = s.claim(10, "p3", 7000, 7000, 9000, Set.of()).get(0);
    assertEquals(1, y2.attempts());
    assertEquals(7000, y2.firstAttemptAtMs(), "a released first attempt is forgotten, start and all");

    // Runs without an outcome of their own: p1's, which ended stale (its refused release above;
    // counted since the review of 2026-12-08, see StaleRunsAreBoundedTest); p2's was handed back
    // uncounted.
    assertEquals(1, s.unrecordedRuns(x3), "p1's stale run");
    // A long run cut short by close: handed back due at once, but counted, its first attempt kept.
    assertTrue(s.releaseCounted(x3, 8000, "cut after a long run"));
    ClaimedEvent x4 = s.claim(10, "p4", 8000, 8000, 9500, Set.of(new EventKey("acme", "y"))).get(0);
    assertEquals("x", x4.eventId());
    assertEquals(3, x4.attempts(), "p1's and p3's runs counted, p2's not");
    assertEquals(1000, x4.firstAttemptAtMs());
    assertEquals(2, s.unrecordedRuns(x4), "p1's stale run and p3's counted cut");
    // One that never ends (its process died) is one too.
    ClaimedEvent x5 = s.claim(10, "p5", 9600, 9600, 9700, Set.of(new EventKey("acme", "y"))).get(0);
    assertEquals(x4.run() + 1, x5.run());
    assertEquals(3, s.unrecordedRuns(x5), "p1's stale run, p3's cut and p4's run that never ended");
    x4 = x5;
    assertTrue(s.markDone(x4, 8100));
  }

  private static byte[] digest(String id) {
    return ("sig-" + id).getBytes(StandardCharsets.UTF_8);
  }
}
