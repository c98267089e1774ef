package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.webhooks.internal.ClaimedEvent;
import dev.idem.webhooks.internal.InboxStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * On PostgreSQL, the writes a delivery of a known event makes (InboxStore.answerKnown): a damaged
 * event repaired by its resend, the signed time moved for purgeDone, and, where the id is
 * unsigned, the delivery's signature remembered until its signed time is outside the window.
 */
@ExtendWith(PostgresExtension.class)
class PostgresAnsweredDeliveriesTest {
  static final byte[] BODY = "{\"amount\":1299}".getBytes(StandardCharsets.UTF_8);

  @Test
  void aResignedRetryIsRememberedUntilItsWindowEndsAndKeepsItsEventUntilThen(PgDatabase db) {
    try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).open()) {
      InboxStore store = inbox.store();
      assertEquals(AcceptResult.ACCEPTED, store.insert("acme", "ev-1", "t", new byte[] {1}, List.of(), false, BODY,
          1000L, 1000));
      assertEquals(AcceptResult.DUPLICATE, store.insert("acme", "ev-1", "t", new byte[] {2}, List.of(), false, BODY,
          5000L, 5000));
      assertEquals(AcceptResult.REPLAY, store.insert("acme", "ev-2", "t", new byte[] {2}, List.of(), false, BODY,
          5000L, 5100), "the retry's signature under a new id");

      ClaimedEvent e = store.claim(1, "p1", 6000, 66_000).get(0);
      store.markDone(e, 6000);
      assertEquals(0, store.purgeDone(10_000, 4000), "signed again at 5000: kept");
      assertEquals(AcceptResult.REPLAY, store.insert("acme", "ev-3", "t", new byte[] {2}, List.of(), false, BODY,
          5000L, 7000), "and so is the retry's signature");
      assertEquals(1, store.purgeDone(10_000, 5001));
      assertEquals(AcceptResult.ACCEPTED, store.insert("acme", "ev-4", "t", new byte[] {2}, List.of(), false, BODY,
          5000L, 7000), "past the window (the receiver refuses it by its time): nothing of it is left");
    }
  }

  @Test
  void theResendOfADamagedDeadLetterMakesItDueAgain(PgDatabase db) throws Exception {
    try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).open()) {
      InboxStore store = inbox.store();
      store.insert("acme", "ev-9", "t", new byte[] {9}, List.of(), true, BODY, null, 1000);
      try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
        assertEquals(1, st.executeUpdate("UPDATE idem_webhook_inbox SET body = 'x'::bytea WHERE event_id = 'ev-9'"));
      }
      ClaimedEvent e = store.claim(1, "p1", 2000, 62_000).get(0);
      assertFalse(e.payloadIntact());
      store.markDead(e, 2000, InboxStore.DAMAGED, "permanent: damaged payload");

      assertEquals(AcceptResult.ACCEPTED, store.insert("acme", "ev-9", "t", new byte[] {10}, List.of(), true, BODY,
          null, 3000));
      InboxEntry repaired = inbox.find("acme", "ev-9").orElseThrow();
      assertEquals(InboxState.PENDING, repaired.state());
      assertEquals(0, repaired.attempts());
      ClaimedEvent again = store.claim(1, "p1", 3000, 63_000).get(0);
      assertEquals(new String(BODY, StandardCharsets.UTF_8), new String(again.body(), StandardCharsets.UTF_8));
      assertEquals(AcceptResult.DUPLICATE, store.insert("acme", "ev-9", "t", new byte[] {11}, List.of(), true, BODY,
          null, 4000), "once repaired, a further resend is a duplicate");
    }
  }
}
