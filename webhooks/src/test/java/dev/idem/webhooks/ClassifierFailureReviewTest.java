package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Jitter;
import dev.idem.core.RetryPolicy;
import dev.idem.testkit.webhook.WebhookSigner;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A classifier that throws while judging a handler's failure (here the common
 * {@code t.getMessage().contains(...)} on an exception without a message) leaves the event
 * PROCESSING under its lease, its attempt never ended: the run is neither retried on the policy's
 * schedule nor recorded, and the processor logs that the store failed.
 */
class ClassifierFailureReviewTest extends InboxOnVirtualClock {
  static final String SECRET = ReceiverTest.SECRET;


  @Test
  void aClassifierThatThrowsLeavesTheEventProcessingUntilItsLeaseEnds() {
    openInbox();
    WebhookReceiver receiver = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
        .secret(SECRET).clock(time.clock()).build(), inbox).build();
    byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
    Map<String, List<String>> h = new TreeMap<>();
    WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "evt_1", "order.paid", time.clock().instant(), body).headers()
        .forEach((k, v) -> h.put(k, List.of(v)));
    assertEquals(200, receiver.handle("POST", h, body).status());

    AtomicInteger runs = new AtomicInteger();
    HandlerFailureClassifier byMessage = t -> t.getMessage().contains("timeout")
        ? Optional.of(FailureKind.RETRY) : Optional.empty();
    WebhookProcessor p = WebhookProcessor.builder(inbox).owner("p1").random(() -> 0.5)
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).baseDelay(Duration.ofSeconds(10))
            .maxDelay(Duration.ofMinutes(1)).deadline(Duration.ofHours(1)).jitter(Jitter.FULL).build())
        .classifier(byMessage.orElse(HandlerFailureClassifier.defaults()))
        .handler("order.paid", e -> {
          runs.incrementAndGet();
          throw new IllegalStateException();  // no message: the classifier throws NullPointerException
        }).build();

    assertEquals(1, p.processDue(10));
    InboxEntry e = inbox.find("acme", "evt_1").orElseThrow();
    List<HandlerAttempt> history = inbox.attempts("acme", "evt_1");
    // The handler's failure was judged: the event is PENDING for a retry (or DEAD), and its run ended.
    assertTrue(e.state() == InboxState.PENDING || e.state() == InboxState.DEAD,
        "after the handler failed once, the event is " + e.state() + " (attempt history " + history + ")");
    assertTrue(history.get(0).endedAt().isPresent(), "the run's attempt row was never ended: " + history);

    time.advance(Duration.ofMinutes(1));  // past any retry delay the policy could choose (at most 1 min)
    p.processDue(10);
    assertEquals(2, runs.get(), "the handler ran again after the policy's delay");
  }
}
