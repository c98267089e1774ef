package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: the inbox kept each accepted payload with no checksum, so a byte changed on disk (a
 * flipped bit the integrity check cannot see: the page is well formed) was handed to the handler
 * as the provider's payload. Each event now carries a SHA-256 of its source, id, type and payload:
 * a changed one is a dead letter saying why, never handled, and a read of it says it is damaged; a
 * row from before the checksum column reads as before. The first test failed before (the handler
 * got the changed body; checked with the processor's check switched off).
 */
class InboxPayloadChecksumTest {
  @TempDir
  Path dir;

  @Test
  void aChangedPayloadIsNeverHandedToTheHandler() throws Exception {
    accept("evt_1", "{\"total\":\"17.00\"}");
    sql("UPDATE idem_webhook_inbox SET body = CAST('{\"total\":\"97.00\"}' AS BLOB) WHERE event_id = 'evt_1'");

    List<String> handled = new ArrayList<>();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookProcessor.builder(inbox).owner("t")
          .defaultHandler(e -> handled.add(new String(e.body(), StandardCharsets.UTF_8))).build().processDue(10);
      assertEquals(List.of(), handled, "the changed payload reached the handler");
      assertEquals(1L, inbox.counts().get(InboxState.DEAD), "a dead letter, saying why");
      assertTrue(inbox.attempts("acme", "evt_1").get(0).toString().contains("checksum"),
          inbox.attempts("acme", "evt_1").toString());
      WebhookInboxException e = assertThrows(WebhookInboxException.class, () -> inbox.find("acme", "evt_1"));
      assertTrue(e.getMessage().contains("checksum"), e.getMessage());
      // A redrive does not hand it over either.
      assertTrue(inbox.redrive("acme", "evt_1"));
      WebhookProcessor.builder(inbox).owner("t")
          .defaultHandler(x -> handled.add(new String(x.body(), StandardCharsets.UTF_8))).build().processDue(10);
      assertEquals(List.of(), handled);
      assertEquals(1L, inbox.counts().get(InboxState.DEAD));
    }
  }

  @Test
  void aChangedTypeOfAHandledEventIsReportedNotShown() throws Exception {
    accept("evt_4", "{\"total\":\"68.00\"}");
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookProcessor.builder(inbox).owner("t").defaultHandler(x -> { }).build().processDue(10);
    }
    sql("UPDATE idem_webhook_inbox SET event_type = 'ord?r.paid' WHERE event_id = 'evt_4'");
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookInboxException e = assertThrows(WebhookInboxException.class, () -> inbox.find("acme", "evt_4"));
      assertTrue(e.getMessage().contains("checksum"), e.getMessage());
    }
  }

  /**
   * Issue 26: {@code list} and {@code deadLetters} read rows without their checksum, so a damaged
   * event was listed with its changed type. Failed before (list returned the entry). {@code counts}
   * reads no payload (the gauges call it), so it counts the damaged event, which no read serves.
   */
  @Test
  void listingsAndCountsReportADamagedEventInsteadOfServingIt() throws Exception {
    accept("evt_5", "{\"total\":\"85.00\"}");
    accept("evt_6", "{\"total\":\"02.00\"}");
    sql("UPDATE idem_webhook_inbox SET event_type = 'ord?r.paid' WHERE event_id = 'evt_5'");
    sql("UPDATE idem_webhook_inbox SET state = 'DEAD' WHERE event_id = 'evt_6'");
    sql("UPDATE idem_webhook_inbox SET body = CAST('{\"total\":\"92.00\"}' AS BLOB) WHERE event_id = 'evt_6'");
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      for (org.junit.jupiter.api.function.Executable read : List.<org.junit.jupiter.api.function.Executable>of(
          () -> inbox.list(InboxState.PENDING, 10), () -> inbox.deadLetters(10))) {
        WebhookInboxException e = assertThrows(WebhookInboxException.class, read);
        assertTrue(e.getMessage().contains("checksum"), e.getMessage());
      }
    }
    try (WebhookInbox inbox = WebhookInbox.openReadOnly(dir)) {
      WebhookInboxException e = assertThrows(WebhookInboxException.class, () -> inbox.list(InboxState.PENDING, 10));
      assertTrue(e.getMessage().contains("evt_5"), e.getMessage());
    }
  }

  /**
   * An operator's listing ({@code idem webhooks dead-letters}) read pages with {@code list}, so one
   * damaged dead letter, which the processor makes on purpose, hid all the others. {@code page}
   * marks it in its place, and the next page starts after it even when it ends a page.
   */
  @Test
  void aPageMarksADamagedEventInItsPlaceAndTheNextPageGoesOnAfterIt() throws Exception {
    accept("evt_a", "{\"total\":\"11.00\"}");
    accept("evt_b", "{\"total\":\"12.00\"}");
    accept("evt_c", "{\"total\":\"13.00\"}");
    sql("UPDATE idem_webhook_inbox SET body = CAST('{\"total\":\"92.00\"}' AS BLOB) WHERE event_id = 'evt_b'");
    try (WebhookInbox inbox = WebhookInbox.openReadOnly(dir)) {
      InboxPage first = inbox.page(InboxState.PENDING, null, 2);
      assertEquals(List.of("evt_a", "evt_b"), first.events().stream().map(InboxEntry::eventId).toList());
      assertEquals(List.of("evt_b"), first.damaged().stream().map(InboxEntry::eventId).toList());
      assertTrue(first.isDamaged(first.events().get(1)) && !first.isDamaged(first.events().get(0)));
      InboxPage second = inbox.page(InboxState.PENDING, first.last().orElseThrow(), 2);
      assertEquals(List.of("evt_c"), second.events().stream().map(InboxEntry::eventId).toList());
      assertEquals(List.of(), second.damaged());
      assertEquals(List.of(), inbox.page(InboxState.PENDING, second.last().orElseThrow(), 2).events());
      assertThrows(IllegalArgumentException.class, () -> inbox.page(InboxState.PENDING, null, 0));
    }
  }

  @Test
  void aRowWithoutAChecksumFromBeforeTheColumnIsHandledAsBefore() throws Exception {
    accept("evt_2", "{\"total\":\"34.00\"}");
    sql("UPDATE idem_webhook_inbox SET body_sha256 = NULL");

    List<String> handled = new ArrayList<>();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookProcessor.builder(inbox).owner("t")
          .defaultHandler(e -> handled.add(new String(e.body(), StandardCharsets.UTF_8))).build().processDue(10);
      assertEquals(List.of("{\"total\":\"34.00\"}"), handled);
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_2").orElseThrow().state());
    }
  }

  @Test
  void anIntactPayloadIsHandledOnce() throws Exception {
    accept("evt_3", "{\"total\":\"51.00\"}");
    List<String> handled = new ArrayList<>();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookProcessor.builder(inbox).owner("t")
          .defaultHandler(e -> handled.add(new String(e.body(), StandardCharsets.UTF_8))).build().processDue(10);
    }
    assertEquals(List.of("{\"total\":\"51.00\"}"), handled);
  }

  private void accept(String id, String body) {
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      assertEquals(AcceptResult.ACCEPTED, inbox.accept(new VerifiedWebhook("acme", id, "order.paid", null,
          Instant.ofEpochMilli(1000), body.getBytes(StandardCharsets.UTF_8), id.getBytes(StandardCharsets.UTF_8))));
    }
  }

  private void sql(String update) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("inbox.db"));
        Statement s = c.createStatement()) {
      assertEquals(1, s.executeUpdate(update));
    }
  }
}
