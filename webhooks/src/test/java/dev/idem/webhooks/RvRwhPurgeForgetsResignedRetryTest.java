package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Review rwh: {@code WebhookInbox.purgeDone}'s Javadoc promises "Give an {@code olderThan} of at
 * least the largest {@link WebhookSource#tolerance()} ..., and a replay of a purged event is outside
 * its window ... (its signed time is what counts)". The purge measures that signed time from the
 * event's <em>first</em> delivery only ({@code InboxStore.purgeDone}: {@code signed_at}, written by
 * the insert that accepted it). A provider's retry of the same event, re-signed later (the docs'
 * "same event id again (a provider's retry, re-signed)", answered 200 duplicate: its sender lost or
 * timed out on our first answer), is a DUPLICATE that stores nothing, so neither its later signed
 * time nor its signature is remembered. Once the event is purged by that rule, a byte-identical
 * copy of the retry delivery (a captured request, or a proxy re-sending it) is still inside its
 * window: it is accepted as a new event and the handler runs a second time, although the app
 * purged exactly as the Javadoc says is safe.
 *
 * <p>Matters because the window is the only replay defence left after a purge; a DUPLICATE with a
 * later signed time could move the event's {@code signed_at} forward (or the purge bound could use
 * the latest signed delivery seen), so that the documented rule holds for every delivery of it.
 */
class RvRwhPurgeForgetsResignedRetryTest extends InboxOnVirtualClock {
  static final String SECRET = ReceiverTest.SECRET;

  @Test
  void aReplayOfAResignedRetryAfterTheDocumentedPurgeIsNotHandledAgain() throws Exception {
    openInbox();
    WebhookSource source = WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET)
        .clock(time.clock()).build();
    WebhookReceiver r = WebhookReceiver.builder(source, inbox).build();
    AtomicInteger runs = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox).clock(time.clock()).owner("p1")
        .handler("payment.succeeded", e -> runs.incrementAndGet()).build();
    byte[] body = ReceiverTest.body("evt_1", "pay");

    WebhookDelivery first = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1", "payment.succeeded",
        time.clock().instant(), body);
    assertEquals("{\"status\":\"accepted\"}", ReceiverTest.post(r, first).body());
    assertEquals(1, p.processDue(10));

    // The provider never got our first answer (it timed out): it retries ten minutes later, signed again.
    time.advance(Duration.ofMinutes(10));
    WebhookDelivery retry = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1", "payment.succeeded",
        time.clock().instant(), body);
    assertEquals("{\"status\":\"duplicate\"}", ReceiverTest.post(r, retry).body());

    // The app's housekeeping purges with the documented minimum, the sources' tolerance.
    time.advance(Duration.ofSeconds(5));
    int purged = inbox.purgeDone(source.tolerance());

    // A minute after the retry was signed, a byte-identical copy of it arrives: inside its window.
    time.advance(Duration.ofSeconds(55));
    WebhookResponse replay = ReceiverTest.post(r, retry);
    p.processDue(10);

    assertEquals(1, runs.get(), "the handler ran again for a replay of the provider's re-signed retry (purged "
        + purged + " event(s) with olderThan = the tolerance, as documented; the replay was answered "
        + replay.status() + " " + replay.body() + ")");
  }
}
