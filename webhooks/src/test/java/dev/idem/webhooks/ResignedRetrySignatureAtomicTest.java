package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyException;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.storage.Durability;
import dev.idem.storage.Layout;
import dev.idem.storage.SqlWork;
import dev.idem.storage.Store;
import dev.idem.storage.StoreOpener;
import dev.idem.webhooks.internal.InboxStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A provider's retry of a known event, signed again (a new signature; the id header unsigned), is
 * answered duplicate and its signature remembered, so that a copy of it under a new id is refused
 * as a replay. The signature must be remembered in the same write that finds the id known: a copy
 * whose write comes right after that one (another request thread, or another instance) must find
 * it. Here the copy is delivered as soon as the retry's first write has committed, before the
 * retry's delivery returns; it must be refused, the inbox must hold one event, and the handler
 * must run once. On SQLite and on PostgreSQL.
 */
@ExtendWith(PostgresExtension.class)
class ResignedRetrySignatureAtomicTest {
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
    check(hook -> opener.openEmbedded(layout, (name, dialect, store, version, opened) ->
        new InboxStore(dialect, new AfterFirstWrite(store, hook), opened, name)));
  }

  @Test
  void onPostgres(PgDatabase db) throws Exception {
    StoreOpener opener = new StoreOpener(InboxStore.SCHEMA, false, Duration.ofMillis(50), time.clock());
    check(hook -> opener.openDataSource(db.dataSource(), (name, dialect, store, version, opened) ->
        new InboxStore(dialect, new AfterFirstWrite(store, hook), opened, name)));
  }

  private void check(Opening open) throws Exception {
    AtomicReference<Runnable> afterWrite = new AtomicReference<>();
    try (InboxStore store = open.apply(afterWrite)) {
      WebhookInbox inbox = WebhookInbox.over(store, time.clock());
      GenericHmac timed = GenericHmac.builder("X-Acme-Signature").signaturePrefix("sha256=").idHeader("X-Acme-Id")
          .timestampHeader("X-Acme-Time").typeHeader("X-Acme-Type").signedContent("{timestamp}.{body}").build();
      WebhookSource source = WebhookSource.builder("acme", SignatureScheme.hmac(timed)).secret(SECRET)
          .clock(time.clock()).build();
      WebhookReceiver r = WebhookReceiver.builder(source, inbox).build();
      AtomicInteger runs = new AtomicInteger();
      List<String> ran = new ArrayList<>();
      byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
      try (WebhookProcessor p = WebhookProcessor.builder(inbox).clock(time.clock()).owner("p1")
          .handler("order.paid", e -> {
            runs.incrementAndGet();
            ran.add(e.eventId());
          }).build()) {
        String t0 = Long.toString(time.clock().instant().getEpochSecond());
        assertEquals("{\"status\":\"accepted\"}", r.handle("POST", headers("ev-1", t0), body).body());
        assertEquals(1, p.processDue(10));

        // The provider retries ev-1, signed again a minute later. A copy of that retry under a new
        // id arrives while the retry is being answered, once the retry's first write is in.
        time.advance(Duration.ofMinutes(1));
        String t1 = Long.toString(time.clock().instant().getEpochSecond());
        AtomicReference<WebhookResponse> replay = new AtomicReference<>();
        afterWrite.set(() -> {
          try {
            replay.set(r.handle("POST", headers("ev-2", t1), body));
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        });
        assertEquals("{\"status\":\"duplicate\"}", r.handle("POST", headers("ev-1", t1), body).body());
        assertEquals(null, afterWrite.get(), "the copy was delivered");
        p.processDue(10);

        assertEquals(List.of("ev-1"), ran, "the copy under a new id ran the handler; it was answered "
            + replay.get().status() + " " + replay.get().body());
        assertEquals(1, runs.get());
        assertEquals(List.of("ev-1"), inbox.list(InboxState.DONE, 10).stream().map(InboxEntry::eventId).toList());
        assertEquals(1L, inbox.counts().values().stream().mapToLong(Long::longValue).sum(),
            "the inbox holds ev-1 only: " + inbox.counts());
      }
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

  /** Opens the inbox store over {@link AfterFirstWrite} with the given hook. */
  private interface Opening {
    InboxStore apply(AtomicReference<Runnable> hook) throws Exception;
  }

  /** A store that runs the hook, once, after the next write has committed and before it returns. */
  private static final class AfterFirstWrite extends ForwardingStore {
    private final AtomicReference<Runnable> hook;

    AfterFirstWrite(Store store, AtomicReference<Runnable> hook) {
      super(store);
      this.hook = hook;
    }

    @Override
    public <T> T write(Durability durability, Object row, SqlWork<T> work) throws IdempotencyException {
      T result = store.write(durability, row, work);
      Runnable h = hook.getAndSet(null);
      if (h != null) {
        h.run();
      }
      return result;
    }
  }
}
