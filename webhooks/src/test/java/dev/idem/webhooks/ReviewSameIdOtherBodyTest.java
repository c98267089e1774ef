package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.support.InboxRows;
import dev.idem.webhooks.support.RecordingListener;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review (verify): a validly signed delivery that reuses an accepted event id with a different
 * payload is answered exactly like a provider's retry of the same payload: 200
 * {@code {"status":"duplicate"}}, a plain {@code Duplicate} activity, nothing logged above DEBUG. The
 * second payload is dropped and nobody can tell: the answer, the metrics ({@code duplicates}) and the
 * listener all say "same event again". Seed 001 asks the opposite for a key reused with another
 * content: a conflict, refused with an explicit code, never the first result returned silently. The
 * inbox already has what it needs to tell them apart (the stored payload and its checksum).
 */
class ReviewSameIdOtherBodyTest extends InboxOnVirtualClock {
  static final String SECRET = ReceiverTest.SECRET;
  static final Instant T0 = Instant.parse("2026-12-01T12:00:00Z");

  final RecordingListener listener = new RecordingListener();

  @Test
  void theSameEventIdWithAnotherSignedPayloadIsNotASilentDuplicate() throws Exception {
    openInbox();
    WebhookSource source = WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET)
        .clock(time.clock()).build();
    WebhookReceiver r = WebhookReceiver.builder(source, inbox).listener(listener).build();

    byte[] first = ReceiverTest.body("evt_1", "amount 1299");
    byte[] other = ReceiverTest.body("evt_1", "amount 999999");
    WebhookResponse a = ReceiverTest.post(r, WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1",
        "payment.succeeded", T0, first));
    time.advance(Duration.ofSeconds(30));
    WebhookResponse b = ReceiverTest.post(r, WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1",
        "payment.succeeded", time.clock().instant(), other));

    assertEquals("{\"status\":\"accepted\"}", a.body());
    assertEquals(1, InboxRows.count(dir));
    // What a retry of the very same payload gets; a different payload under that id must be told apart.
    assertNotEquals("{\"status\":\"duplicate\"}", b.body(),
        "a different payload under an accepted id is answered as a plain duplicate (status " + b.status() + ")");
    assertNotEquals(List.of("accepted payment.succeeded", "duplicate"), listener.events,
        "the listener (and so the 'duplicates' metric) hears a plain duplicate");
  }
}
