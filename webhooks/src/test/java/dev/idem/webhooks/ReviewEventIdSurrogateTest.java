package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An event id is an identity: 35f43b71 refuses one with a NUL rather than change it, "since two
 * different identities would then share one row" (StoredText). An unpaired surrogate is the same
 * case: "\ud800" is a valid JSON escape, Jackson returns it as a lone UTF-16 unit, and the driver
 * stores every lone surrogate as '?'. Two different signed events then share one row: the second
 * is answered 200 "duplicate" and its handler never runs. The journal refuses such identities
 * (JdbcJournal.begin, the executor's owner check); the receiver does not.
 */
class ReviewEventIdSurrogateTest {
  static final String SECRET = "whsec_idemStripeTest";

  @TempDir
  Path dir;

  @Test
  void twoEventsWhoseIdsDifferOnlyInALoneSurrogateAreNotStoredAsOne() {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    Clock clock = time.clock();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(clock).open()) {
      WebhookReceiver r = WebhookReceiver.builder(WebhookSource.builder("stripe", SignatureScheme.stripe())
          .secret(SECRET).clock(clock).build(), inbox).build();

      WebhookResponse first = post(r, clock, "evt_\\ud800");
      WebhookResponse second = post(r, clock, "evt_\\udbff");

      long stored = inbox.counts().values().stream().mapToLong(Long::longValue).sum();
      boolean bothRefused = first.status() == 400 && second.status() == 400 && stored == 0;
      boolean bothStored = stored == 2;
      assertEquals(true, bothRefused || bothStored, "two different signed events: first " + first.status() + " "
          + first.body() + ", second " + second.status() + " " + second.body() + ", " + stored
          + " stored (the second one's handler never runs)");
    }
  }

  private static WebhookResponse post(WebhookReceiver r, Clock clock, String escapedId) {
    byte[] body = ("{\"id\":\"" + escapedId + "\",\"type\":\"charge.succeeded\",\"data\":{}}")
        .getBytes(StandardCharsets.UTF_8);
    WebhookDelivery d = WebhookSigner.STRIPE.sign(SECRET, "ignored", "charge.succeeded", clock.instant(), body);
    Map<String, List<String>> h = new TreeMap<>();
    d.headers().forEach((k, v) -> h.put(k, List.of(v)));
    return r.handle("POST", h, d.body());
  }
}
