package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.testkit.webhook.WebhookSigner;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * WebhookProcessor.Builder.owner takes a name of any length, and on the embedded inbox it works;
 * on PostgreSQL the lease owner is a VARCHAR(128), so with a longer name (an owner built from a
 * host name, pod and deployment, say) every claim fails and no event is ever handled: the inbox
 * fills while the processor only logs poll failures.
 */
@ExtendWith(PostgresExtension.class)
class PostgresLongOwnerReviewTest {
  @Test
  void anOwnerTheBuilderTookMakesEveryPostgresClaimFail(PgDatabase db) {
    String owner = "webhooks-" + "checkout-service-eu-west-1-production-7f9c8d6b5-x2k4z.".repeat(3);  // 170 chars
    try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).open()) {
      WebhookReceiver receiver = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
          .secret(ReceiverTest.SECRET).build(), inbox).build();
      byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
      Map<String, List<String>> h = new TreeMap<>();
      WebhookSigner.STANDARD_WEBHOOKS.sign(ReceiverTest.SECRET, "evt_1", "order.paid", inbox.clock().instant(), body)
          .headers().forEach((k, v) -> h.put(k, List.of(v)));
      assertEquals(200, receiver.handle("POST", h, body).status());

      AtomicInteger runs = new AtomicInteger();
      WebhookProcessor p;
      try {
        p = WebhookProcessor.builder(inbox).owner(owner).handler("order.paid", e -> runs.incrementAndGet()).build();
      } catch (IllegalArgumentException refused) {
        return;  // a fix: refused at configuration, naming the limit
      }
      String failure = null;
      try {
        p.processDue(10);
      } catch (WebhookInboxException e) {
        failure = e.getMessage();
      }
      assertEquals(1, runs.get(), "the builder took an owner of " + owner.length() + " characters and the claim"
          + " failed: " + failure);
    }
  }
}
