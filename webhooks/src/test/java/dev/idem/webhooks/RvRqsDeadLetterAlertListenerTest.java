package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.webhooks.metrics.MicrometerWebhookMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/webhooks.md, "Metrics (Micrometer, optional)", second snippet: it builds a
 * {@code deadLetterAlerts} listener ("dead letter from ..." on {@code System.err}), combines it
 * with the metrics by {@code WebhookListener.all(List)}, and gives the result to the
 * <em>receiver</em> only: {@code WebhookReceiver.builder(source, inbox).listener(listener).build()}.
 * A receiver's listener "hears accepts, duplicates and rejections" ({@code WebhookReceiver.Builder#listener});
 * a {@code DeadLettered} activity is told only by the processor ({@code WebhookProcessor}, where it
 * dead-letters an event). So the alert the snippet is written for never fires, and the combined
 * metrics never count a dead letter, retry or processed event: an app that copies it believes it
 * is alerted on dead letters and is not. Text defect (code right): the snippet must give the
 * listener to the processor too (as the first metrics snippet does), or say so.
 *
 * <p>The test runs the snippet as written (its {@code System.err} captured) and dead-letters an
 * event through the snippet's processor, which has no handler for its type.
 */
class RvRqsDeadLetterAlertListenerTest extends InboxOnVirtualClock {
  @Test
  void theSnippetsDeadLetterAlertFiresWhenAnEventIsDeadLettered() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream original = System.err;
    WebhookInbox inbox = openInbox();
    WebhookSource source = WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
        .secret(ReceiverTest.SECRET).clock(time.clock()).build();
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      // --- docs/webhooks.md, as written ---
      WebhookListener deadLetterAlerts = activity -> {
        if (activity instanceof WebhookActivity.DeadLettered d) {
          System.err.println("dead letter from " + d.source() + ", type " + d.eventType());
        }
      };
      WebhookListener listener = WebhookListener.all(List.of(MicrometerWebhookMetrics.bind(registry, inbox),
          deadLetterAlerts));
      WebhookReceiver receiver = WebhookReceiver.builder(source, inbox).listener(listener).build();
      WebhookProcessor processor = WebhookProcessor.builder(inbox).listener(listener).build();
      // --- end of the snippet ---

      // The snippet's processor has no handler (the doc leaves them out): any event is a dead letter.
      WebhookDeliveries.deliver(receiver, time, "evt_1", "charge.refunded");
      processor.processDue(10);
      processor.close();
    } finally {
      System.setErr(original);
    }

    assertEquals(InboxState.DEAD, inbox.find("acme", "evt_1").orElseThrow().state(), "the event was dead-lettered");
    Counter deadLettered = registry.find("idem.webhooks.deadlettered").counter();
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("dead letter from acme, type charge.refunded"),
        "the snippet's dead-letter alert never fired for a dead letter: its listener was given to the receiver"
            + " only, which never tells DeadLettered (deadlettered counter: "
            + (deadLettered == null ? "not registered" : deadLettered.count()) + ")");
    assertEquals(1.0, deadLettered == null ? 0.0 : deadLettered.count(), "the metrics counted the dead letter once");
  }
}
