package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.support.InboxRows;
import dev.idem.webhooks.support.RecordingListener;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: the inbox reports in the client's style (one {@code onEvent} of a sealed type,
 * {@code none()}, {@code all(List)}), and what a listener throws never changes the answer to the
 * sender nor the event's fate.
 */
class ListenerTest {
  @TempDir
  Path dir;

  @Test
  void aThrowingListenerChangesNeitherTheAnswerNorTheEventsFateAndAllTellsEveryListenerInOrder() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    RecordingListener first = new RecordingListener();
    List<WebhookActivity> heard = new ArrayList<>();
    WebhookListener throwing = a -> {
      heard.add(a);
      throw new IllegalStateException("a broken dashboard");
    };
    WebhookListener listener = WebhookListener.all(List.of(first, throwing));
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver r = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
          .secret(ReceiverTest.SECRET).clock(time.clock()).build(), inbox).listener(listener).build();
      byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
      Map<String, List<String>> h = new TreeMap<>();
      WebhookSigner.STANDARD_WEBHOOKS.sign(ReceiverTest.SECRET, "evt_1", "order.paid", ReceiverTest.T0, body)
          .headers().forEach((k, v) -> h.put(k, List.of(v)));
      WebhookResponse answer = r.handle("POST", h, body);
      int[] runs = {0};
      int ran = WebhookProcessor.builder(inbox).listener(listener).handler("order.paid", e -> runs[0]++).build()
          .processDue(10);

      assertEquals(200, answer.status());
      assertEquals("{\"status\":\"accepted\"}", answer.body());
      assertEquals(1, InboxRows.count(dir));
      assertEquals(1, ran);
      assertEquals(1, runs[0], "the handler ran once");
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state(), "a throw did not undo DONE");
      assertEquals(List.of("accepted order.paid", "processed order.paid after 1"), first.events);
      assertEquals(List.of(new WebhookActivity.Accepted("acme", "order.paid")), heard.subList(0, 1));
      assertEquals(2, heard.size());
    }
  }

  /**
   * {@code all(List.of(logging, metrics))}: when the first listener throws, the ones after it must
   * still hear every activity (the metrics must not go blind because a log appender broke); what the
   * broken one threw still reaches the caller, whose guard logs it, and changes neither the
   * receiver's answer nor the event's fate.
   */
  @Test
  void aListenerThatThrowsFirstInAllLeavesTheListenersAfterItHearingEveryActivity() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    List<WebhookActivity> heardByBroken = new ArrayList<>();
    WebhookListener broken = a -> {
      heardByBroken.add(a);
      throw new IllegalStateException("a broken log appender");
    };
    RecordingListener metrics = new RecordingListener();
    WebhookListener listener = WebhookListener.all(List.of(broken, metrics));

    IllegalStateException thrown = assertThrows(IllegalStateException.class,
        () -> listener.onEvent(new WebhookActivity.Duplicate("acme")));
    assertEquals("a broken log appender", thrown.getMessage());
    assertEquals(List.of("duplicate"), metrics.events, "the listener after the broken one was not told");

    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver r = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
          .secret(ReceiverTest.SECRET).clock(time.clock()).build(), inbox).listener(listener).build();
      byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
      Map<String, List<String>> h = new TreeMap<>();
      WebhookSigner.STANDARD_WEBHOOKS.sign(ReceiverTest.SECRET, "evt_1", "order.paid", ReceiverTest.T0, body)
          .headers().forEach((k, v) -> h.put(k, List.of(v)));
      WebhookResponse answer = r.handle("POST", h, body);
      int[] runs = {0};
      WebhookProcessor p = WebhookProcessor.builder(inbox).listener(listener).random(() -> 0.5)
          .handler("order.paid", e -> {
            if (++runs[0] == 1) {
              throw new IllegalStateException("downstream busy");
            }
          }).build();
      assertEquals(1, p.processDue(10));
      time.advance(java.time.Duration.ofHours(1));
      assertEquals(1, p.processDue(10));

      assertEquals(200, answer.status());
      assertEquals("{\"status\":\"accepted\"}", answer.body());
      assertEquals(2, runs[0], "the handler ran once more after its failure");
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state());
      assertEquals(4, heardByBroken.size(), "the broken listener is still told of each activity: " + heardByBroken);
      assertEquals(4, metrics.events.size(), "the listener after the broken one missed activities: " + metrics.events);
      assertEquals("accepted order.paid", metrics.events.get(1));
      assertTrue(metrics.events.get(2).startsWith("retry order.paid in "), metrics.events.toString());
      assertEquals("processed order.paid after 2", metrics.events.get(3));
    }
  }

  /** An Error too waits until every listener was told, and no failure is lost on the way. */
  @Test
  void allTellsEveryListenerThenThrowsTheFirstErrorWithTheOtherFailuresSuppressed() {
    IllegalStateException broken = new IllegalStateException("a broken log appender");
    NoSuchMethodError linkage = new NoSuchMethodError("a metrics binder built against another Micrometer");
    RecordingListener last = new RecordingListener();
    WebhookListener listener = WebhookListener.all(List.of(a -> {
      throw broken;
    }, a -> {
      throw linkage;
    }, a -> {
      throw broken;
    }, last));

    NoSuchMethodError thrown = assertThrows(NoSuchMethodError.class,
        () -> listener.onEvent(new WebhookActivity.Duplicate("acme")));
    assertEquals(List.of("duplicate"), last.events, "the last listener was not told");
    assertEquals(linkage, thrown);
    assertEquals(List.of(broken), List.of(thrown.getSuppressed()));
  }

  @Test
  void noneHearsNothingAndAllRefusesANullListener() {
    WebhookListener.none().onEvent(new WebhookActivity.Duplicate("acme"));
    List<WebhookListener> withNull = new ArrayList<>();
    withNull.add(null);
    assertThrows(NullPointerException.class, () -> WebhookListener.all(withNull));
  }
}
