package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.webhooks.internal.AttemptRow;
import dev.idem.webhooks.internal.ClaimedEvent;
import dev.idem.webhooks.internal.InboxStore;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The decision recorded with a run is a VARCHAR(300) on PostgreSQL, but the store clipped it to
 * 1000 characters, as it does the error: a decision longer than 300 (a retry reason that quotes a
 * long exception class name, say) failed the write that records the retry, so the event stayed
 * PROCESSING under its lease and its run was never ended.
 */
@ExtendWith(PostgresExtension.class)
class PostgresLongDecisionTest {
  @Test
  void aDecisionLongerThanItsColumnIsClippedNotAFailedWrite(PgDatabase db) {
    try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).open()) {
      InboxStore store = inbox.store();
      store.insert("acme", "evt_1", "order.paid", new byte[] {1}, List.of(), false, "{}".getBytes(StandardCharsets.UTF_8),
          null, 1000);
      ClaimedEvent e = store.claim(1, "p1", 1000, 61_000).get(0);
      String decision = "backoff FULL jitter, retry 1 (the classifier threw " + "Very".repeat(100)
          + "LongException), next in PT5S";
      String error = "java.lang.IllegalStateException: " + "x".repeat(600);

      assertTrue(store.scheduleRetry(e, 2000, 7000, 5000, error, decision), "the retry was recorded");

      AttemptRow run = store.attempts("acme", "evt_1").get(0);
      assertEquals("retry", run.outcome());
      assertEquals(error, run.error(), "an error within its 1000 characters is kept whole");
      assertEquals(300, run.decision().length());
      assertTrue(decision.startsWith(run.decision()), run.decision());
      assertEquals(InboxState.PENDING, inbox.find("acme", "evt_1").orElseThrow().state());
    }
  }
}
