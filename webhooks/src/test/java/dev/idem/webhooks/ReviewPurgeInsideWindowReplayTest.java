package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Review (verify): {@code WebhookInbox.purgeDone}'s Javadoc says that after a purge "for Standard
 * Webhooks and Stripe the timestamp window still rejects an old replay". It does not while the
 * purged delivery's signed time is still inside the window, and the window reaches up to twice the
 * tolerance past acceptance (it is "either way": a sender whose clock runs ahead is accepted). Here the
 * provider's clock is one minute ahead, the event is handled at once, and the app purges DONE events
 * older than the source's own tolerance (5 min): a captured copy of the very same delivery, re-sent
 * one second after the purge, is still inside the window, is accepted as a new event and runs the
 * handler a second time. Nothing in the docs says how long to keep events for the replay defence to hold.
 */
class ReviewPurgeInsideWindowReplayTest extends InboxOnVirtualClock {
  static final String SECRET = ReceiverTest.SECRET;
  static final Instant T0 = Instant.parse("2026-12-01T12:00:00Z");


  @Test
  void aReplayOfAPurgedDeliveryStillInsideTheWindowIsAcceptedAndHandledAgain() throws Exception {
    openInbox();
    WebhookSource source = WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET)
        .clock(time.clock()).build();
    WebhookReceiver r = WebhookReceiver.builder(source, inbox).build();
    AtomicInteger runs = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox).clock(time.clock()).owner("p1")
        .handler("payment.succeeded", e -> runs.incrementAndGet()).build();

    // The provider's clock is 60 s ahead of ours: well inside the 300 s tolerance.
    WebhookDelivery d = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1", "payment.succeeded",
        T0.plusSeconds(60), ReceiverTest.body("evt_1", "pay"));
    assertEquals("{\"status\":\"accepted\"}", ReceiverTest.post(r, d).body());
    assertEquals(1, p.processDue(10));
    assertEquals(1, runs.get());

    time.advance(source.tolerance().plusSeconds(1));
    // Finished more than the tolerance ago, but signed less: a replay would still pass the window,
    // so the purge keeps it (before the fix it was deleted here, and the replay below handled again).
    assertEquals(0, inbox.purgeDone(source.tolerance()), "kept while its signed time is inside the window");

    WebhookResponse replay = ReceiverTest.post(r, d);  // the very same captured request
    p.processDue(10);

    assertEquals(1, runs.get(), "the replay of an already handled delivery ran the handler again; answer: "
        + replay.status() + " " + replay.body());
    assertEquals("{\"status\":\"duplicate\",\"reason\":\"replay\"}", replay.body());

    // Once its signed time is more than the tolerance (and the window's one-second granularity) ago,
    // it is purged, and the window refuses the replay.
    time.advance(Duration.ofSeconds(61));
    assertEquals(1, inbox.purgeDone(source.tolerance()));
    WebhookResponse late = ReceiverTest.post(r, d);
    p.processDue(10);
    assertEquals(400, late.status());
    assertEquals("{\"status\":\"rejected\",\"reason\":\"timestamp\"}", late.body());
    assertEquals(1, runs.get());
  }
}
