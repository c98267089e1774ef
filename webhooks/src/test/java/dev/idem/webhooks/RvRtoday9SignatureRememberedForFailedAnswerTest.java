package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.storage.Layout;
import dev.idem.storage.StoreOpener;
import dev.idem.webhooks.internal.ClaimedEvent;
import dev.idem.webhooks.internal.InboxStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commit 76139c4a writes a re-signed duplicate's signature (idem_webhook_signatures) in
 * {@code InboxStore.insert}'s unit, but the move of the event's signed time stays in
 * {@code answerKnown}'s second unit. The two are no longer one atomic write: when the second unit
 * fails (a PostgreSQL connection lost or a pool timeout, a disk error on SQLite), the receiver
 * answers 503 "not stored, retry", yet the delivery's signature is stored as if it had been
 * answered for the event. The provider's retry of that very request (same id, same signature) is
 * then refused as a REPLAY (told to the listener as a replay attack) instead of being answered
 * DUPLICATE, and the event's signed time is never moved to the retry's: the documented invariant
 * "an event's signed time is that of the latest delivery of it the inbox answered" breaks, and
 * {@code purgeDone} deletes the event while that delivery's window is still open. Before the
 * commit the signature and the signed time were written in one unit, and the retry was answered
 * DUPLICATE with the signed time moved (this test passes on c9bb6df5). On SQLite and PostgreSQL.
 */
@ExtendWith(PostgresExtension.class)
class RvRtoday9SignatureRememberedForFailedAnswerTest {
  static final String SECRET = "acme-s3cret";
  static final Instant T0 = Instant.parse("2026-12-04T09:00:00Z");
  static final String BODY = "{\"order\":42,\"amount\":1299}";

  @TempDir
  Path dir;

  final VirtualTime time = new VirtualTime(T0);

  @Test
  void onSqlite() throws Exception {
    StoreOpener opener = new StoreOpener(InboxStore.SCHEMA, false, Duration.ofMillis(50), time.clock());
    Layout layout = new Layout(dir, "inbox.db", "inbox", "webhook inbox", "WebhookInbox", true);
    check(failWrite -> opener.openEmbedded(layout, (name, dialect, s, version, opened) ->
        new InboxStore(dialect, new FailingNthWrite(s, failWrite), opened, name)));
  }

  @Test
  void onPostgres(PgDatabase db) throws Exception {
    StoreOpener opener = new StoreOpener(InboxStore.SCHEMA, false, Duration.ofMillis(50), time.clock());
    check(failWrite -> opener.openDataSource(db.dataSource(), (name, dialect, s, version, opened) ->
        new InboxStore(dialect, new FailingNthWrite(s, failWrite), opened, name)));
  }

  /** Opens the inbox store over {@link FailingNthWrite} with the given countdown. */
  private interface Opening {
    InboxStore apply(AtomicInteger failWrite) throws Exception;
  }

  /** A retry of a delivery answered 503 is answered DUPLICATE and moves the event's signed time. */
  private void check(Opening open) throws Exception {
    AtomicInteger failWrite = new AtomicInteger(); // 0: none; n: the n-th write from now fails
    try (InboxStore store = open.apply(failWrite)) {
      WebhookInbox inbox = WebhookInbox.over(store, time.clock());
      GenericHmac timed = GenericHmac.builder("X-Acme-Signature").signaturePrefix("sha256=").idHeader("X-Acme-Id")
          .timestampHeader("X-Acme-Time").typeHeader("X-Acme-Type").signedContent("{timestamp}.{body}").build();
      WebhookSource source = WebhookSource.builder("acme", SignatureScheme.hmac(timed)).secret(SECRET)
          .clock(time.clock()).build();
      WebhookReceiver r = WebhookReceiver.builder(source, inbox).build();
      byte[] body = BODY.getBytes(StandardCharsets.UTF_8);

      String t0 = Long.toString(time.clock().instant().getEpochSecond());
      assertEquals("{\"status\":\"accepted\"}", r.handle("POST", headers("ev-1", t0), body).body());
      time.advance(Duration.ofSeconds(10));
      ClaimedEvent e = store.claim(1, "p1", time.clock().millis(), time.clock().millis() + 60_000).get(0);
      store.markDone(e, time.clock().millis());

      // The provider retries ev-1, signed again at T0 + 1 min. The write that records what the
      // retry changes (its signed time) fails: the receiver answers 503, so the provider retries.
      time.advance(Duration.ofSeconds(50));
      String t1 = Long.toString(time.clock().instant().getEpochSecond());
      failWrite.set(2);
      WebhookResponse failed = r.handle("POST", headers("ev-1", t1), body);
      assertEquals(503, failed.status(), "the retry's second write failed: " + failed.body());

      // The provider's retry of that same request, seconds later.
      time.advance(Duration.ofSeconds(5));
      WebhookResponse retried = r.handle("POST", headers("ev-1", t1), body);

      // Ten minutes on, keep DONE events for 10 min 25 s: ev-1 was signed again at T0 + 60 s, inside.
      time.advance(Duration.ofMinutes(10));
      int purged = inbox.purgeDone(Duration.ofSeconds(625));

      assertAll(
          () -> assertEquals("{\"status\":\"duplicate\"}", retried.body(), "the retry of a delivery answered 503"
              + " (nothing stored, retry) must be answered as the duplicate it is, not refused as a replay"),
          () -> assertEquals(0, purged, "the retry was answered for ev-1, signed at T0 + 60 s: its signed time"
              + " must be ev-1's, which keeps it inside the window; it was purged"));
    }
  }

  static String sign(String content) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    return "sha256=" + HexFormat.of().formatHex(mac.doFinal(content.getBytes(StandardCharsets.UTF_8)));
  }

  static Map<String, List<String>> headers(String id, String ts) throws Exception {
    return Map.of("X-Acme-Signature", List.of(sign(ts + "." + BODY)), "X-Acme-Id", List.of(id),
        "X-Acme-Time", List.of(ts), "X-Acme-Type", List.of("order.paid"));
  }
}
