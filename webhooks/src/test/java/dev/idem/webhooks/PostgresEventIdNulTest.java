package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An event's id and type are identities: the inbox deduplicates on the id and routes on the type,
 * so they are stored as the provider sent them or not at all. Stripe's travel in the signed JSON
 * body, where "\u0000" is a valid escape, and PostgreSQL's text types refuse a NUL: the insert
 * failed, the receiver answered 503, and the provider sent the same event again and again, each
 * delivery failing alike. A delivery that can never be stored is the provider's malformed request,
 * refused at receipt with a 400 so that it stops, like an id longer than the column.
 */
@ExtendWith(PostgresExtension.class)
class PostgresEventIdNulTest {
  static final String SECRET = "whsec_idemStripeTest";

  @Test
  void aSignedEventWhoseIdHoldsANulIsRefusedAtReceiptNotAnsweredUnavailable(PgDatabase db) {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    Clock clock = time.clock();
    try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).clock(clock).open()) {
      WebhookReceiver r = WebhookReceiver.builder(WebhookSource.builder("stripe", SignatureScheme.stripe())
          .secret(SECRET).clock(clock).build(), inbox).build();

      WebhookResponse id = post(r, clock, "evt_a\u0000b", "charge.succeeded");
      WebhookResponse type = post(r, clock, "evt_2", "charge.\u0000succeeded");

      assertEquals(400, id.status(), "an event id with a NUL: " + id.body());
      assertTrue(id.body().contains("header"), id.body());
      assertEquals(400, type.status(), "an event type with a NUL: " + type.body());
      assertEquals(0L, inbox.counts().values().stream().mapToLong(Long::longValue).sum(),
          "stored, under another id or type: " + inbox.counts());
    }
  }

  @Test
  void aProcessorOwnerWithANulIsRefusedWhenBuiltNotOnEveryClaim(PgDatabase db) {
    try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).open()) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> WebhookProcessor.builder(inbox).owner("pod\u00001"));
      assertTrue(e.getMessage().contains("NUL"), e.getMessage());
    }
  }

  private static WebhookResponse post(WebhookReceiver r, Clock clock, String id, String type) {
    WebhookDelivery d = WebhookSigner.STRIPE.sign(SECRET, id, type, clock.instant(),
        WebhookSigner.jsonEvent(id, type, "{}"));
    Map<String, List<String>> h = new TreeMap<>();
    d.headers().forEach((k, v) -> h.put(k, List.of(v)));
    return r.handle("POST", h, d.body());
  }
}
