package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.support.InboxRows;
import dev.idem.webhooks.support.RecordingListener;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The id of an accepted event, validly signed, with another payload: a {@code conflict} rejection
 * on every attempt, answered 2xx (so that the sender stops), the accepted event unchanged and handled
 * once; a retry of the accepted payload is still a plain duplicate.
 */
class SameIdOtherBodyConflictTest extends InboxOnVirtualClock {
  static final String SECRET = ReceiverTest.SECRET;
  static final Instant T0 = Instant.parse("2026-12-01T12:00:00Z");

  final RecordingListener listener = new RecordingListener();

  @Test
  void anotherPayloadUnderAnAcceptedIdIsAConflictEveryTime() throws Exception {
    openInbox();
    WebhookSource source = WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET)
        .clock(time.clock()).build();
    WebhookReceiver r = WebhookReceiver.builder(source, inbox).listener(listener).build();
    List<byte[]> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
    AtomicInteger runs = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox).clock(time.clock()).owner("p1")
        .handler("payment.succeeded", e -> {
          runs.incrementAndGet();
          handled.add(e.body());
        }).build();

    byte[] first = ReceiverTest.body("evt_1", "amount 1299");
    byte[] other = ReceiverTest.body("evt_1", "amount 999999");
    assertEquals(200, ReceiverTest.post(r, WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1",
        "payment.succeeded", T0, first)).status());
    for (int attempt = 0; attempt < 2; attempt++) {  // sent twice: the same answer and count each time
      time.advance(Duration.ofSeconds(30));
      WebhookResponse b = ReceiverTest.post(r, WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1",
          "payment.succeeded", time.clock().instant(), other));
      assertEquals(200, b.status(), "a non-2xx would be retried for days, and no retry could change the answer");
      assertEquals("{\"status\":\"duplicate\",\"reason\":\"conflict\"}", b.body());
    }
    time.advance(Duration.ofSeconds(30));
    WebhookResponse retry = ReceiverTest.post(r, WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1",
        "payment.succeeded", time.clock().instant(), first));
    assertEquals("{\"status\":\"duplicate\"}", retry.body());

    assertEquals(List.of("accepted payment.succeeded", "rejected conflict", "rejected conflict", "duplicate"),
        listener.events);
    assertEquals(1, InboxRows.count(dir));
    p.processDue(10);
    assertEquals(1, runs.get());
    assertArrayEquals(first, handled.get(0), "the accepted payload, unchanged");
  }
}
