package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testkit.webhook.WebhookSigner;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression test (review of 2026-12-08): the inbox stamped received and due times by the source's clock.
 *
 * The user opens the inbox on a clock of its own ({@code WebhookInbox.sqlite(dir).clock(c)}, whose
 * Javadoc says it "stamps received, due and finished times"; the processor reads the inbox's clock
 * by default), and builds the source on another one (the default system clock, as the source must
 * follow the time the provider signs with). A delivery is accepted (200).
 *
 * <p>Expected: the inbox stamps the event's received and due time with its own clock, so the
 * processor on that clock finds it due and runs it. Before the fix, {@code WebhookInbox.accept} stores
 * {@code VerifiedWebhook.receivedAt()}, read from the {@link WebhookSource}'s clock, as both
 * received_at and next_attempt_at ({@code InboxStore.insert}); a processor whose clock is behind
 * the source's (a {@code Clock.fixed} test clock, which the docs say is supported) never finds the
 * accepted event due, and it is never processed.
 */
class InboxClockStampsReceivedTimeTest {
  @TempDir
  Path dir;

  @Test
  void theInboxClockStampsTheReceivedAndDueTime() {
    Instant t0 = ReceiverTest.T0;
    Clock inboxClock = Clock.fixed(t0, ZoneOffset.UTC);
    Clock sourceClock = Clock.fixed(t0.plusSeconds(60), ZoneOffset.UTC); // a minute later: real time went on
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(inboxClock).open()) {
      WebhookReceiver receiver = WebhookReceiver.builder(WebhookSource.builder("acme",
          SignatureScheme.standardWebhooks()).secret(ReceiverTest.SECRET).clock(sourceClock).build(), inbox).build();
      byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
      Map<String, List<String>> h = new TreeMap<>();
      WebhookSigner.STANDARD_WEBHOOKS.sign(ReceiverTest.SECRET, "evt_1", "order.paid", sourceClock.instant(), body)
          .headers().forEach((k, v) -> h.put(k, List.of(v)));
      assertEquals(200, receiver.handle("POST", h, body).status());

      AtomicInteger runs = new AtomicInteger();
      WebhookProcessor p = WebhookProcessor.builder(inbox).handler("order.paid", e -> runs.incrementAndGet())
          .owner("p1").build();
      try {
        int ran = p.processDue(10);
        assertEquals(1, ran, "the accepted event is due by the inbox's (and processor's) clock; actual: it was"
            + " stamped received and due at " + inbox.find("acme", "evt_1").orElseThrow().receivedAt()
            + " by the source's clock, while the inbox's clock reads " + inboxClock.instant());
        assertEquals(t0, inbox.find("acme", "evt_1").orElseThrow().receivedAt(),
            "the inbox's clock stamps received times");
      } finally {
        p.close();
      }
    }
  }
}
