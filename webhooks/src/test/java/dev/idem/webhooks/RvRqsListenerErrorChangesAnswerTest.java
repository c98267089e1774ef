package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testkit.webhook.WebhookSigner;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * docs/webhooks.md, "Metrics (Micrometer, optional)": listeners are combined with
 * {@code WebhookListener.all(List)}, and "what a listener throws is logged and ignored, never
 * changing the answer to the sender or the event's fate". An {@code Error} is not: the receiver
 * tells its listener through {@code internal/Listeners.tell}, which catches only RuntimeException,
 * after the event is stored; the Error leaves {@code WebhookReceiver.handle} instead of the 200
 * "accepted" answer. docs/server.md names the realistic case for the guard's listener (a metrics
 * binder built against another Micrometer throws {@code NoSuchMethodError}) and ignores it there.
 * Here every delivery is then stored but never answered 2xx: {@code JdkWebhookHandler} and
 * {@code WebhookServlet} catch nothing and let the Error out to the container, and the sender
 * retries "for days and may then disable the endpoint" (the docs' own reason for answering
 * conflicts 2xx). Either the text is
 * wrong (say that an Error goes through, as {@code WebhookListener.all}'s Javadoc half says) or the
 * receiver should log and ignore it after the durable accept, as the guard's purge does.
 */
class RvRqsListenerErrorChangesAnswerTest extends InboxOnVirtualClock {
  @Test
  void aListenerThatThrowsAnErrorDoesNotChangeTheAnswerToTheSender() {
    WebhookInbox inbox = openInbox();
    WebhookListener metricsFromAnotherMicrometer = activity -> {
      throw new NoSuchMethodError("'void io.micrometer.core.instrument.Counter.increment()' (a binder built against"
          + " another Micrometer)");
    };
    WebhookReceiver receiver = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
        .secret(ReceiverTest.SECRET).clock(time.clock()).build(), inbox)
        .listener(WebhookListener.all(List.of(metricsFromAnotherMicrometer))).build();
    byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
    Map<String, List<String>> h = new TreeMap<>();
    WebhookSigner.STANDARD_WEBHOOKS.sign(ReceiverTest.SECRET, "evt_1", "order.paid", time.now(), body)
        .headers().forEach((k, v) -> h.put(k, List.of(v)));

    String answer;
    try {
      WebhookResponse r = receiver.handle("POST", h, body);
      answer = r.status() + " " + r.body();
    } catch (Error e) {
      answer = "no answer: " + e;
    }

    assertEquals(InboxState.PENDING, inbox.find("acme", "evt_1").orElseThrow().state(), "the event was stored");
    assertEquals("200 {\"status\":\"accepted\"}", answer,
        "a listener's Error changed the answer to the sender of a stored event");
  }
}
