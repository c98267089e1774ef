package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testkit.webhook.WebhookSigner;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review rwh: the only recovery the inbox offers for a damaged event cannot work.
 *
 * <p>An event whose stored payload no longer matches its checksum is made a dead letter, and
 * docs/webhooks.md ("Stored payloads carry a checksum"), the dead letter's recorded decision and
 * {@code InboxStore.requireIntact}'s message all tell the operator: "ask the provider to resend it,
 * or restore the inbox from a backup". But the resend is answered {@code 200 duplicate} and stores
 * nothing: {@code InboxStore.insert} finds the (source, event id) already there and compares the
 * resend's checksum with the <em>stored checksum</em>, which is intact and equal to it (only the
 * payload changed on disk), so it is a DUPLICATE. The damaged row stays DEAD, a redrive makes it
 * DEAD again (it still fails its checksum), and no API deletes a dead letter: the event the
 * provider resent, as told, is never processed. The sender has been told 2xx, so it never sends it
 * again either: the event is lost while every message says how to get it back.
 *
 * <p>A resend whose content matches the stored checksum is the genuine payload: it could repair the
 * damaged row (store its payload, PENDING again) instead of being dropped as a duplicate.
 */
class RvRwhDamagedEventResendIsDroppedTest extends InboxOnVirtualClock {
  static final String SECRET = "whsec_c3RyaXBlLXN0eWxlLXRlc3Qtc2VjcmV0";

  final java.time.Clock clock = time.clock();

  WebhookReceiver receiver() {
    WebhookSource stripe = WebhookSource.builder("stripe", SignatureScheme.stripe()).secret(SECRET).clock(clock)
        .build();
    return WebhookReceiver.builder(stripe, inbox).build();
  }

  @Test
  void theResendTheDocsAdviseForADamagedEventIsProcessed() throws Exception {
    byte[] payload = WebhookSigner.jsonEvent("evt_42", "invoice.paid", "{\"amount\":1299}");
    openInbox();
    WebhookResponse first = ReceiverTest.post(receiver(),
        WebhookSigner.STRIPE.sign(SECRET, "evt_42", "invoice.paid", clock.instant(), payload));
    assertEquals("{\"status\":\"accepted\"}", first.body());
    closeInbox();

    // A byte of the stored payload changes on disk (the case the checksum exists for).
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("inbox.db"));
        Statement s = c.createStatement()) {
      assertEquals(1, s.executeUpdate("UPDATE idem_webhook_inbox SET body = CAST(REPLACE(CAST(body AS TEXT),"
          + " '1299', '9299') AS BLOB) WHERE event_id = 'evt_42'"));
    }

    openInbox();
    List<String> handled = new ArrayList<>();
    WebhookProcessor processor = WebhookProcessor.builder(inbox).owner("p1").clock(clock)
        .defaultHandler(e -> handled.add(e.bodyAsString())).build();
    processor.processDue(10);
    assertEquals(List.of(), handled, "the damaged payload is never handed over (as documented)");
    assertEquals(1L, inbox.counts().get(InboxState.DEAD), "a dead letter: ask the provider to resend it");

    // The operator does what the message says: the provider resends the event, signed again.
    time.advance(Duration.ofMinutes(2));
    WebhookResponse resend = ReceiverTest.post(receiver(),
        WebhookSigner.STRIPE.sign(SECRET, "evt_42", "invoice.paid", clock.instant(), payload));
    processor.processDue(10);
    inbox.redrive("stripe", "evt_42"); // and even re-drives it, for good measure
    processor.processDue(10);

    assertEquals(List.of(new String(payload, StandardCharsets.UTF_8)), handled,
        "the provider's resend of a damaged event (answered " + resend.status() + " " + resend.body()
            + ") was never processed: the event is lost although the sender was told 2xx and every message"
            + " says to ask for a resend");
  }
}
