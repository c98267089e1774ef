package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
import dev.idem.storage.Layout;
import dev.idem.storage.StoreOpener;
import dev.idem.webhooks.internal.InboxStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A re-signed retry (event id unsigned) whose answer failed after insert's unit remembered its
 * signature: its own retry is the known event's delivery (RvRtoday9SignatureRememberedForFailedAnswerTest),
 * but only that. A copy under a new id, the same request once its change is written, and the same
 * request after its event was purged are still replays, and the handler runs once.
 */
class FailedAnswerRetryTest {
  static final String BODY = RvRtoday9SignatureRememberedForFailedAnswerTest.BODY;
  static final Instant T0 = RvRtoday9SignatureRememberedForFailedAnswerTest.T0;
  static final String REPLAY = "{\"status\":\"duplicate\",\"reason\":\"replay\"}";

  @TempDir
  Path dir;

  final VirtualTime time = new VirtualTime(T0);
  final AtomicInteger failWrite = new AtomicInteger();
  final byte[] body = BODY.getBytes(StandardCharsets.UTF_8);

  InboxStore open() throws Exception {
    StoreOpener opener = new StoreOpener(InboxStore.SCHEMA, false, Duration.ofMillis(50), time.clock());
    Layout layout = new Layout(dir, "inbox.db", "inbox", "webhook inbox", "WebhookInbox", true);
    return opener.openEmbedded(layout, (name, dialect, s, version, opened) ->
        new InboxStore(dialect, new FailingNthWrite(s, failWrite), opened, name));
  }

  WebhookSource source() {
    GenericHmac timed = GenericHmac.builder("X-Acme-Signature").signaturePrefix("sha256=").idHeader("X-Acme-Id")
        .timestampHeader("X-Acme-Time").typeHeader("X-Acme-Type").signedContent("{timestamp}.{body}").build();
    return WebhookSource.builder("acme", SignatureScheme.hmac(timed))
        .secret(RvRtoday9SignatureRememberedForFailedAnswerTest.SECRET).clock(time.clock()).build();
  }

  static Map<String, List<String>> headers(String id, String ts) throws Exception {
    return RvRtoday9SignatureRememberedForFailedAnswerTest.headers(id, ts);
  }

  String now() {
    return Long.toString(time.clock().instant().getEpochSecond());
  }

  /** Accepts ev-1 and runs it, then answers a re-signed retry of it 503 (its second unit fails); its signed time. */
  String acceptRunAndFailARetry(WebhookReceiver r, WebhookProcessor p) throws Exception {
    assertEquals("{\"status\":\"accepted\"}", r.handle("POST", headers("ev-1", now()), body).body());
    p.processDue(10);
    time.advance(Duration.ofMinutes(1));
    String t1 = now();
    failWrite.set(2);
    assertEquals(503, r.handle("POST", headers("ev-1", t1), body).status());
    return t1;
  }

  @Test
  void onlyTheSameEventsRetryIsItsDeliveryAndOnlyWhileItChangesIt() throws Exception {
    try (InboxStore store = open()) {
      WebhookInbox inbox = WebhookInbox.over(store, time.clock());
      WebhookReceiver r = WebhookReceiver.builder(source(), inbox).build();
      AtomicInteger runs = new AtomicInteger();
      WebhookProcessor p = WebhookProcessor.builder(inbox).clock(time.clock()).owner("p1")
          .handler("order.paid", e -> runs.incrementAndGet()).build();
      String t1 = acceptRunAndFailARetry(r, p);

      time.advance(Duration.ofSeconds(5));
      assertEquals(REPLAY, r.handle("POST", headers("ev-2", t1), body).body(),
          "a copy of the failed retry under a new id is a replay");
      assertEquals("{\"status\":\"duplicate\"}", r.handle("POST", headers("ev-1", t1), body).body());
      assertEquals(REPLAY, r.handle("POST", headers("ev-1", t1), body).body(),
          "once the retry's change is written, the same request again changes nothing: a replay, as before");
      assertEquals(REPLAY, r.handle("POST", headers("ev-2", t1), body).body());
      p.processDue(10);

      assertEquals(1, runs.get(), "the handler ran for ev-1 once");
      assertEquals(1L, inbox.counts().get(InboxState.DONE));
      assertEquals(0L, inbox.counts().get(InboxState.PENDING), "no event stored for ev-2");
    }
  }

  @Test
  void theFailedRetryOfAPurgedEventIsAReplay() throws Exception {
    try (InboxStore store = open()) {
      WebhookInbox inbox = WebhookInbox.over(store, time.clock());
      WebhookSource source = source();
      WebhookReceiver r = WebhookReceiver.builder(source, inbox).build();
      AtomicInteger runs = new AtomicInteger();
      WebhookProcessor p = WebhookProcessor.builder(inbox).clock(time.clock()).owner("p1")
          .handler("order.paid", e -> runs.incrementAndGet()).build();
      String t1 = acceptRunAndFailARetry(r, p);

      // ev-1 kept its first signed time (T0): purged once T0 is outside the window, while the failed
      // retry's remembered signature, signed a minute later, is still inside it.
      time.advance(source.tolerance().minusSeconds(30));
      assertEquals(1, inbox.purgeDone(source.tolerance()));
      assertEquals(REPLAY, r.handle("POST", headers("ev-1", t1), body).body(),
          "the event is gone: a resend of it would be taken for a new event and run again");
      p.processDue(10);

      assertEquals(1, runs.get());
      assertEquals(0L, inbox.counts().get(InboxState.PENDING));
    }
  }
}
