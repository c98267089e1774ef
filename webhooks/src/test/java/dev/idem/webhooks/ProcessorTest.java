package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Jitter;
import dev.idem.core.RetryPolicy;
import dev.idem.webhooks.support.RecordingListener;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Processing on a fake clock, driven by {@link WebhookProcessor#processDue}: retries at the times
 * sdk-core's RetryPolicy chooses, dead letters for permanent failures and spent attempts, re-drive,
 * and the attempt history.
 */
class ProcessorTest extends InboxOnVirtualClock {
  static final String SECRET = ReceiverTest.SECRET;
  static final Instant T0 = ReceiverTest.T0;
  static final RetryPolicy POLICY = RetryPolicy.builder().maxAttempts(3).baseDelay(Duration.ofSeconds(10))
      .maxDelay(Duration.ofMinutes(5)).deadline(Duration.ofHours(1)).jitter(Jitter.FULL).build();

  final java.time.Clock clock = time.clock();
  final RecordingListener listener = new RecordingListener();
  WebhookReceiver receiver;

  @BeforeEach
  void open() {
    openInbox();
    receiver = receiver(inbox, time);
  }

  void deliver(String id, String type) {
    WebhookDeliveries.deliver(receiver, time, id, type);
  }

  WebhookProcessor.Builder processor() {
    // r = 0.5 always: FULL jitter gives exactly half the exponential delay, so the times are known.
    return WebhookProcessor.builder(inbox).retryPolicy(POLICY).random(() -> 0.5).listener(listener).owner("p1");
  }

  @Test
  void aTransientFailureIsRetriedAtThePolicysTimesUntilItSucceeds() {
    AtomicInteger runs = new AtomicInteger();
    WebhookProcessor p = processor().handler("order.paid", e -> {
      if (runs.incrementAndGet() < 3) {
        throw new IllegalStateException("downstream busy");
      }
    }).build();
    deliver("evt_1", "order.paid");

    assertEquals(1, p.processDue(10));
    assertEquals(InboxState.PENDING, inbox.find("acme", "evt_1").orElseThrow().state());
    time.advance(Duration.ofSeconds(4));
    assertEquals(0, p.processDue(10), "not due before half of 10 s");
    time.advance(Duration.ofSeconds(1));
    assertEquals(1, p.processDue(10), "due after 5 s = 0.5 x 10 s");
    time.advance(Duration.ofSeconds(9));
    assertEquals(0, p.processDue(10));
    time.advance(Duration.ofSeconds(1));
    assertEquals(1, p.processDue(10), "due after 10 s = 0.5 x 20 s");

    InboxEntry e = inbox.find("acme", "evt_1").orElseThrow();
    assertEquals(InboxState.DONE, e.state());
    assertEquals(3, runs.get());
    assertEquals(3, e.attempts());
    List<HandlerAttempt> history = inbox.attempts("acme", "evt_1");
    assertEquals(List.of("retry", "retry", "done"), history.stream().map(a -> a.outcome().orElseThrow()).toList());
    assertTrue(history.get(0).error().orElseThrow().contains("downstream busy"));
    assertTrue(history.get(0).decision().orElseThrow().contains("PT5S"), history.get(0).decision().toString());
    assertEquals(List.of("retry order.paid in PT5S", "retry order.paid in PT10S", "processed order.paid after 3"),
        listener.events);
    assertEquals(0, p.processDue(10), "DONE never runs again");
  }

  @Test
  void aPermanentFailureIsADeadLetterAtOnceAndARedriveRunsItAgainWithTheSameId() {
    AtomicInteger runs = new AtomicInteger();
    List<String> ids = new java.util.concurrent.CopyOnWriteArrayList<>();
    WebhookProcessor p = processor().handler("order.paid", e -> {
      ids.add(e.eventId());
      if (runs.incrementAndGet() == 1) {
        throw new PermanentWebhookException("unknown order");
      }
    }).build();
    deliver("evt_1", "order.paid");

    p.processDue(10);
    assertEquals(InboxState.DEAD, inbox.find("acme", "evt_1").orElseThrow().state());
    assertEquals(1, inbox.deadLetters(10).size());
    assertTrue(inbox.deadLetters(10).get(0).lastError().orElseThrow().contains("unknown order"));
    time.advance(Duration.ofHours(2));
    assertEquals(0, p.processDue(10), "a dead letter is not retried");

    assertTrue(inbox.redrive("acme", "evt_1"));
    assertFalse(inbox.redrive("acme", "evt_1"), "only a dead letter can be re-driven");
    assertEquals(1, p.processDue(10));
    assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state());
    assertEquals(List.of("evt_1", "evt_1"), ids);
    assertEquals(List.of("dead order.paid", "processed order.paid after 1"), listener.events);
    assertEquals(List.of(1, 2), inbox.attempts("acme", "evt_1").stream().map(HandlerAttempt::run).toList(),
        "the history survives the re-drive");
  }

  @Test
  void whenThePolicyGivesUpTheEventIsADeadLetter() {
    WebhookProcessor p = processor().handler("t", e -> {
      throw new IllegalStateException("always");
    }).build();
    deliver("evt_1", "t");
    for (int i = 0; i < 5; i++) {
      p.processDue(10);
      time.advance(Duration.ofMinutes(1));
    }
    InboxEntry e = inbox.find("acme", "evt_1").orElseThrow();
    assertEquals(InboxState.DEAD, e.state());
    assertEquals(3, e.attempts());
    assertTrue(inbox.attempts("acme", "evt_1").get(2).decision().orElseThrow().contains("attempts exhausted"));
  }

  @Test
  void aTypeWithoutAHandlerIsADeadLetterUnlessADefaultHandlerExists() {
    deliver("evt_1", "unknown.type");
    processor().handler("t", e -> { }).build().processDue(10);
    assertEquals(InboxState.DEAD, inbox.find("acme", "evt_1").orElseThrow().state());

    AtomicInteger fallback = new AtomicInteger();
    inbox.redrive("acme", "evt_1");
    processor().defaultHandler(e -> fallback.incrementAndGet()).build().processDue(10);
    assertEquals(1, fallback.get());
    assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state());
  }

  @Test
  void aCustomClassifierMakesAnExceptionPermanent() {
    WebhookProcessor p = processor()
        .classifier(HandlerFailureClassifier.forType(IllegalArgumentException.class, FailureKind.PERMANENT)
            .orElse(HandlerFailureClassifier.defaults()))
        .handler("t", e -> {
          throw new IllegalArgumentException("bad amount");
        }).build();
    deliver("evt_1", "t");
    p.processDue(10);
    assertEquals(InboxState.DEAD, inbox.find("acme", "evt_1").orElseThrow().state());
    assertEquals(1, inbox.find("acme", "evt_1").orElseThrow().attempts());
  }

  @Test
  void aCompletionAfterTheLeaseMovedOnChangesNothing() {
    AtomicInteger runs = new AtomicInteger();
    WebhookProcessor[] other = new WebhookProcessor[1];
    other[0] = processor().owner("p2").lease(Duration.ofSeconds(30)).handler("t", e -> runs.incrementAndGet()).build();
    WebhookProcessor slow = processor().lease(Duration.ofSeconds(30)).handler("t", e -> {
      runs.incrementAndGet();
      time.advance(Duration.ofSeconds(31));  // ran past its lease: another processor takes over
      assertEquals(1, other[0].processDue(10));
      throw new IllegalStateException("late failure");
    }).build();
    deliver("evt_1", "t");
    slow.processDue(10);

    InboxEntry e = inbox.find("acme", "evt_1").orElseThrow();
    assertEquals(InboxState.DONE, e.state(), "the late failure did not undo the other processor's DONE");
    assertEquals(2, runs.get());
    assertEquals(List.of("stale", "done"), inbox.attempts("acme", "evt_1").stream()
        .map(a -> a.outcome().orElseThrow()).toList(), "run 1 (the slow one) was stale, run 2 finished it");
  }
}
