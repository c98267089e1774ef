package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A handler's exception message is free text that often quotes the payload ("unknown customer
 * ..."), and a provider's JSON payload may carry a NUL ("\u0000" is a valid JSON escape, and the
 * text is often the provider's end customer's). PostgreSQL's text types refuse a NUL. The journal
 * replaces it in its reasons since 12b17a02; the inbox still binds the error as given.
 */
@ExtendWith(PostgresExtension.class)
class PostgresHandlerErrorNulTest {
  static final String SECRET = ReceiverTest.SECRET;

  @Test
  void aPermanentFailureWhoseMessageQuotesANulIsDeadLetteredNotRunAgain(PgDatabase db) {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    java.time.Clock clock = time.clock();
    try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).clock(clock).open()) {
      WebhookReceiver r = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
          .secret(SECRET).clock(clock).build(), inbox).build();
      WebhookDelivery d = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "evt_nul", "customer.updated",
          clock.instant(), WebhookSigner.jsonEvent("evt_nul", "customer.updated", "{\"name\":\"a\\u0000b\"}"));
      Map<String, List<String>> h = new TreeMap<>();
      d.headers().forEach((k, v) -> h.put(k, List.of(v)));
      assertEquals(200, r.handle("POST", h, d.body()).status());

      AtomicInteger runs = new AtomicInteger();
      WebhookProcessor p = WebhookProcessor.builder(inbox).owner("a").clock(clock).lease(Duration.ofSeconds(10))
          .handler("customer.updated", e -> {
            runs.incrementAndGet();
            throw new PermanentWebhookException("no customer named a\u0000b");
          }).build();
      p.processDue(10);
      time.advance(Duration.ofSeconds(11));
      p.processDue(10);

      InboxEntry entry = inbox.find("acme", "evt_nul").orElseThrow();
      assertEquals(InboxState.DEAD, entry.state(),
          "a permanent failure whose message has a NUL could not be recorded on PostgreSQL; the event stays "
              + entry.state() + " and is run again when its lease ends");
      assertEquals(1, runs.get(), "a handler that failed permanently ran again");
    }
  }
}
