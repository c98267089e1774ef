package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Jitter;
import dev.idem.core.RetryPolicy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The app's code that the processor calls while it records a handler's failure, beside the
 * classifier ({@link ClassifierFailureReviewTest}): the handler's exception's own
 * {@code getMessage()}, the random source for jitter, the retry policy's delay function and the
 * listener. A bug in any of them must not leave the event PROCESSING under its lease with its run
 * never ended: the run is recorded, and the event retried on the policy's schedule or dead-lettered.
 */
class AppCallbackFailureTest extends InboxOnVirtualClock {
  static final String SECRET = ReceiverTest.SECRET;
  static final RetryPolicy POLICY = RetryPolicy.builder().maxAttempts(3).baseDelay(Duration.ofSeconds(10))
      .maxDelay(Duration.ofMinutes(1)).deadline(Duration.ofHours(1)).jitter(Jitter.FULL).build();

  WebhookReceiver receiver;

  @BeforeEach
  void open() {
    openInbox();
    receiver = receiver(inbox, time);
  }

  void deliver(String id) {
    WebhookDeliveries.deliver(receiver, time, id);
  }

  /** An exception whose message the app computes, with a bug. */
  static final class BrokenMessageException extends RuntimeException {
    @Override
    public String getMessage() {
      throw new IllegalStateException("the message's own bug");
    }
  }

  @Test
  void aHandlerExceptionWhoseGetMessageThrowsIsRecordedAndRetried() {
    AtomicInteger runs = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox).owner("p1").random(() -> 0.5).retryPolicy(POLICY)
        .handler("order.paid", e -> {
          runs.incrementAndGet();
          throw new BrokenMessageException();
        }).build();
    deliver("evt_1");

    assertEquals(1, p.processDue(10));
    HandlerAttempt first = inbox.attempts("acme", "evt_1").get(0);
    assertEquals(InboxState.PENDING, inbox.find("acme", "evt_1").orElseThrow().state(), "history " + first);
    assertEquals("retry", first.outcome().orElseThrow());
    assertTrue(first.error().orElseThrow().startsWith(BrokenMessageException.class.getName()), first.toString());

    time.advance(Duration.ofSeconds(5));  // 0.5 x 10 s
    assertEquals(1, p.processDue(10));
    assertEquals(2, runs.get());
  }

  @Test
  void aClassifierThatThrowsIsNamedByItsClassInTheRunsDecisionNeverByItsMessage() {
    WebhookProcessor p = WebhookProcessor.builder(inbox).owner("p1").random(() -> 0.5).retryPolicy(POLICY)
        .classifier(t -> {
          throw new IllegalArgumentException("cannot classify order 42 for card 4242");
        })
        .handler("order.paid", e -> {
          throw new IllegalStateException("downstream busy");
        }).build();
    deliver("evt_1");

    assertEquals(1, p.processDue(10));
    HandlerAttempt first = inbox.attempts("acme", "evt_1").get(0);
    assertEquals(InboxState.PENDING, inbox.find("acme", "evt_1").orElseThrow().state(), "history " + first);
    assertTrue(first.error().orElseThrow().contains("downstream busy"), "the handler's failure: " + first);
    String decision = first.decision().orElseThrow();
    assertTrue(decision.contains("PT5S") && decision.contains("IllegalArgumentException"), decision);
    assertTrue(!decision.contains("4242"), "the classifier's message is not recorded: " + decision);
  }

  @Test
  void aRandomSourceOutOfRangeStillRecordsTheRunAndRetriesIt() {
    AtomicInteger runs = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox).owner("p1").random(() -> 1.0).retryPolicy(POLICY)
        .handler("order.paid", e -> {
          if (runs.incrementAndGet() == 1) {
            throw new IllegalStateException("downstream busy");
          }
        }).build();
    deliver("evt_1");

    assertEquals(1, p.processDue(10));
    HandlerAttempt first = inbox.attempts("acme", "evt_1").get(0);
    assertEquals(InboxState.PENDING, inbox.find("acme", "evt_1").orElseThrow().state(), "history " + first);
    assertTrue(first.endedAt().isPresent(), first.toString());
    assertTrue(first.error().orElseThrow().contains("downstream busy"), first.toString());

    time.advance(Duration.ofMinutes(1));  // past any delay the policy may choose
    assertEquals(1, p.processDue(10));
    assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state());
  }

  @Test
  void aDelayFunctionThatThrowsLeavesTheBackoffToDecide() {
    RetryPolicy policy = POLICY.toBuilder().delayFunction((retry, previous, r) -> {
      throw new IllegalStateException("no Retry-After to parse");
    }).build();
    AtomicInteger runs = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox).owner("p1").random(() -> 0.5).retryPolicy(policy)
        .handler("order.paid", e -> {
          if (runs.incrementAndGet() == 1) {
            throw new IllegalStateException("downstream busy");
          }
        }).build();
    deliver("evt_1");

    assertEquals(1, p.processDue(10));
    HandlerAttempt first = inbox.attempts("acme", "evt_1").get(0);
    assertEquals(InboxState.PENDING, inbox.find("acme", "evt_1").orElseThrow().state(), "history " + first);
    assertTrue(first.decision().orElseThrow().contains("PT5S"), first.toString());
    time.advance(Duration.ofSeconds(5));
    assertEquals(1, p.processDue(10));
    assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state());
  }

  @Test
  void aListenerThatThrowsOnRetriesAndDeadLettersChangesNoFate() {
    AtomicInteger runs = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox).owner("p1").random(() -> 0.5).retryPolicy(POLICY)
        .listener(a -> {
          throw new IllegalStateException("a broken dashboard");
        })
        .handler("order.paid", e -> {
          runs.incrementAndGet();
          throw new IllegalStateException("downstream busy");
        }).build();
    deliver("evt_1");

    for (int i = 0; i < 3; i++) {
      assertEquals(1, p.processDue(10), "run " + (i + 1));
      time.advance(Duration.ofMinutes(1));
    }
    assertEquals(InboxState.DEAD, inbox.find("acme", "evt_1").orElseThrow().state());
    assertEquals(List.of("retry", "retry", "dead"),
        inbox.attempts("acme", "evt_1").stream().map(a -> a.outcome().orElseThrow()).toList());
    assertEquals(3, runs.get());
  }
}
