package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.internal.ClaimedEvent;
import dev.idem.webhooks.internal.InboxStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review rtoday8 (commit 3f4b513d): the resend of a damaged event that arrives while a processor
 * holds the event's claim is answered {@code duplicate}, and the event then ends a dead letter.
 *
 * <p>{@code InboxStore.answerKnown} repairs the payload of a PROCESSING event but makes only a
 * DEAD one due again, and answers DUPLICATE for any state but PENDING. A processor that claimed the
 * damaged event before the resend (its {@code ClaimedEvent.payloadIntact} is false, read at the
 * claim) then writes it DEAD "fails its SHA-256 checksum" ({@code WebhookProcessor.runClaimed}),
 * over the now intact payload. The sender was told {@code 200 duplicate}, so it never resends; the
 * event is never processed unless an operator happens to redrive it, although the resend the docs
 * ask for came and was acknowledged. The steps below are the processor's own store calls
 * (claim, then {@code markDead(.., InboxStore.DAMAGED, ..)} as {@code runClaimed} does), with the
 * resend between them, as a worker queue or a busy thread lets it happen.
 */
class RvRtoday8ResendWhileDamagedEventClaimedLostTest extends InboxOnVirtualClock {
  static final String SECRET = "whsec_c3RyaXBlLXN0eWxlLXRlc3Qtc2VjcmV0";

  final java.time.Clock clock = time.clock();

  WebhookReceiver receiver() {
    WebhookSource stripe = WebhookSource.builder("stripe", SignatureScheme.stripe()).secret(SECRET).clock(clock)
        .build();
    return WebhookReceiver.builder(stripe, inbox).build();
  }

  @Test
  void aResendDuringTheDamagedEventsClaimIsNotLost() throws Exception {
    byte[] payload = WebhookSigner.jsonEvent("evt_42", "invoice.paid", "{\"amount\":1299}");
    openInbox();
    assertEquals("{\"status\":\"accepted\"}", ReceiverTest.post(receiver(),
        WebhookSigner.STRIPE.sign(SECRET, "evt_42", "invoice.paid", clock.instant(), payload)).body());
    closeInbox();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("inbox.db"));
        Statement s = c.createStatement()) {
      assertEquals(1, s.executeUpdate("UPDATE idem_webhook_inbox SET body = CAST(REPLACE(CAST(body AS TEXT),"
          + " '1299', '9299') AS BLOB) WHERE event_id = 'evt_42'"));
    }
    openInbox();
    InboxStore store = inbox.store();

    // A processor claims the damaged event (what its poll does)...
    long now = clock.millis();
    List<ClaimedEvent> claimed = store.claim(10, "p1", now, now + 30_000);
    assertEquals(1, claimed.size());
    assertFalse(claimed.get(0).payloadIntact());

    // ...the provider's resend arrives meanwhile...
    time.advance(Duration.ofSeconds(1));
    WebhookResponse resend = ReceiverTest.post(receiver(),
        WebhookSigner.STRIPE.sign(SECRET, "evt_42", "invoice.paid", clock.instant(), payload));

    // ...and the processor's worker finds the claimed copy damaged: a dead letter (runClaimed).
    assertTrue(store.markDead(claimed.get(0), clock.millis(), InboxStore.DAMAGED,
        "permanent: damaged payload, never handed to a handler"));

    List<String> handled = new ArrayList<>();
    WebhookProcessor processor = WebhookProcessor.builder(inbox).owner("p2").clock(clock)
        .defaultHandler(e -> handled.add(e.bodyAsString())).build();
    time.advance(Duration.ofMinutes(1));
    processor.processDue(10);

    assertEquals(List.of(new String(payload, StandardCharsets.UTF_8)), handled,
        "the resend of the damaged event, answered " + resend.status() + " " + resend.body() + " while a processor"
            + " held its claim, was never processed: the event is left " + inbox.counts()
            + " and the sender will not send it again");
  }
}
