package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.idem.testkit.webhook.WebhookSigner;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A handler's exception whose cause chain loops (a -> b -> a, which Throwable allows: initCause only
 * refuses a self-cause) hangs the default classifier forever, on the worker thread: the event is
 * neither retried nor dead-lettered, and the worker is lost.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class HandlerFailureCycleTest extends InboxOnVirtualClock {
  final java.time.Clock clock = time.clock();
  WebhookReceiver receiver;

  @BeforeEach
  void open() {
    openInbox();
    receiver = receiver(inbox, time);
  }

  @Test
  void theDefaultClassifierTerminatesOnACyclicCauseChain() {
    Exception a = new IllegalStateException("a");
    Exception b = new RuntimeException("b", a);
    a.initCause(b);  // a -> b -> a
    Optional<FailureKind> kind = assertTimeoutPreemptively(Duration.ofSeconds(5),
        () -> HandlerFailureClassifier.defaults().classify(a), "the default classifier loops on a -> b -> a");
    assertEquals(Optional.of(FailureKind.RETRY), kind);
  }

  @Test
  void aHandlerThrowingACyclicCauseChainIsRetriedNotHungForever() {
    byte[] body = WebhookSigner.jsonEvent("evt_1", "t", "{}");
    Map<String, List<String>> h = new TreeMap<>();
    WebhookSigner.STANDARD_WEBHOOKS.sign(ReceiverTest.SECRET, "evt_1", "t", clock.instant(), body)
        .headers().forEach((k, v) -> h.put(k, List.of(v)));
    assertEquals(200, receiver.handle("POST", h, body).status());
    WebhookProcessor p = WebhookProcessor.builder(inbox).random(() -> 0.5).handler("t", e -> {
      Exception a = new IllegalStateException("downstream");
      Exception b = new RuntimeException("wrapped", a);
      a.initCause(b);
      throw a;
    }).build();
    assertTimeoutPreemptively(Duration.ofSeconds(10), () -> p.processDue(10),
        "processDue never returns: the worker spins in HandlerFailureClassifier.defaults()");
    assertEquals(InboxState.PENDING, inbox.find("acme", "evt_1").orElseThrow().state());
  }
}
