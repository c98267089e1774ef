package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.idem.core.IdempotencyException;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.storage.Durability;
import dev.idem.storage.SingleStatementWork;
import dev.idem.storage.SqlSession;
import dev.idem.storage.SqlWork;
import dev.idem.storage.Store;
import dev.idem.storage.StoreOpener;
import dev.idem.webhooks.internal.ClaimedEvent;
import dev.idem.webhooks.internal.InboxStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Commit a32f2502 lets a remembered signature (idem_webhook_signatures) held by this very event
 * through {@code InboxStore.seenSignature} (NOT_SEEN) while {@code Known.changedBy} says the
 * delivery would still move the event's signed time. insert's unit then goes on to the accept's
 * {@code INSERT ... ON CONFLICT DO NOTHING}. The Known read takes no lock, so on PostgreSQL (READ
 * COMMITTED) a {@code purgeDone} on another connection can delete the DONE event in between: the
 * event's signed time was never moved (that is exactly the case the commit handles: answerKnown's
 * unit failed, 503), so the purge may take it, while the remembered signature, signed later,
 * stays. The INSERT then finds no conflict and the provider's retry of an event already processed
 * is ACCEPTED as a new event and processed a second time. Before the commit a remembered
 * signature of this id was a REPLAY at once, before the INSERT (this test passes on 49317415),
 * and the commit's own contract says the retry is a REPLAY "once the event is purged".
 *
 * <p>The interleaving is made deterministic with a store wrapper that runs the purge (on its own
 * pooled connection, as another instance's purge job would) just after the retry's unit first
 * reads the known event: before the fix, just before its INSERT statement is prepared. Retention 350 s, above the 300 s tolerance.
 */
@ExtendWith(PostgresExtension.class)
class RvRtoday12RememberedRetryPurgedMidUnitTest {
  static final String SECRET = "acme-s3cret";
  static final Instant T0 = Instant.parse("2026-12-04T09:00:00Z");
  static final String BODY = "{\"order\":42,\"amount\":1299}";

  final VirtualTime time = new VirtualTime(T0);

  @Test
  void onPostgres(PgDatabase db) throws Exception {
    StoreOpener opener = new StoreOpener(InboxStore.SCHEMA, false, Duration.ofMillis(50), time.clock());
    AtomicInteger failWrite = new AtomicInteger();
    AtomicReference<Runnable> beforeAcceptInsert = new AtomicReference<>();
    try (InboxStore store = opener.openDataSource(db.dataSource(), (name, dialect, s, version, opened) ->
        new InboxStore(dialect, new FailingNthWrite(new HookBeforeAcceptInsert(s, beforeAcceptInsert), failWrite),
            opened, name))) {
      WebhookInbox inbox = WebhookInbox.over(store, time.clock());
      GenericHmac timed = GenericHmac.builder("X-Acme-Signature").signaturePrefix("sha256=").idHeader("X-Acme-Id")
          .timestampHeader("X-Acme-Time").typeHeader("X-Acme-Type").signedContent("{timestamp}.{body}").build();
      WebhookSource source = WebhookSource.builder("acme", SignatureScheme.hmac(timed)).secret(SECRET)
          .clock(time.clock()).build();
      WebhookReceiver r = WebhookReceiver.builder(source, inbox).build();
      byte[] body = BODY.getBytes(StandardCharsets.UTF_8);

      assertEquals("{\"status\":\"accepted\"}", r.handle("POST", headers("ev-1", secs()), body).body());
      time.advance(Duration.ofSeconds(10));
      ClaimedEvent e = store.claim(1, "p1", time.clock().millis(), time.clock().millis() + 60_000).get(0);
      store.markDone(e, time.clock().millis()); // processed once, DONE at T0 + 10 s

      // The provider retries ev-1, signed again at T0 + 400 s; answerKnown's unit fails: 503.
      time.advance(Duration.ofSeconds(390));
      String t1 = secs();
      failWrite.set(2);
      assertEquals(503, r.handle("POST", headers("ev-1", t1), body).status());

      // Its retry of that very request, 5 s later, while another instance's purge job runs
      // (keep DONE events 350 s: ev-1's signed time is still T0, since the move failed).
      time.advance(Duration.ofSeconds(5));
      AtomicInteger purged = new AtomicInteger(-1);
      beforeAcceptInsert.set(() -> purged.set(inbox.purgeDone(Duration.ofSeconds(350))));
      WebhookResponse retried = r.handle("POST", headers("ev-1", t1), body);
      if (beforeAcceptInsert.getAndSet(null) != null) {
        purged.set(inbox.purgeDone(Duration.ofSeconds(350))); // answered before any INSERT: the purge runs after
      }

      List<ClaimedEvent> again = store.claim(10, "p2", time.clock().millis(), time.clock().millis() + 60_000);
      assertAll(
          () -> assertEquals(1, purged.get(), "the purge took ev-1 (setup)"),
          () -> assertNotEquals("{\"status\":\"accepted\"}", retried.body(), "the retry of a delivery of ev-1,"
              + " already processed (its signature remembered for ev-1), must not be accepted as a new event"),
          () -> assertEquals("{\"status\":\"duplicate\",\"reason\":\"replay\"}", retried.body(),
              "the event purged, its remembered signature's delivery is a replay"),
          () -> assertEquals(0, again.size(), "ev-1 was processed already; it is claimable again: processed twice"));
    }
  }

  private String secs() {
    return Long.toString(time.clock().instant().getEpochSecond());
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

  /**
   * A store that, when armed, runs a hook once just before a unit prepares the statement after its
   * first read of the known event (the read that let the remembered retry through): before the fix,
   * the accept's INSERT into the inbox table; after it, the known path's reads, where the purge's
   * commit is visible too.
   */
  static final class HookBeforeAcceptInsert extends ForwardingStore {
    private final AtomicReference<Runnable> hook;

    HookBeforeAcceptInsert(Store store, AtomicReference<Runnable> hook) {
      super(store);
      this.hook = hook;
    }

    @Override
    public <T> T read(Object row, SqlWork<T> work) throws IdempotencyException {
      return store.read(row, work);
    }

    @Override
    public <T> T write(Durability durability, Object row, SqlWork<T> work) throws IdempotencyException {
      if (hook.get() == null) {
        return store.write(durability, row, work);
      }
      SqlWork<T> wrapped = work instanceof SingleStatementWork<T>
          ? SqlWork.singleStatement(s -> work.run(hooked(s)))
          : s -> work.run(hooked(s));
      return store.write(durability, row, wrapped);
    }

    private SqlSession hooked(SqlSession s) {
      return new SqlSession() {
        @Override
        public Connection connection() {
          return s.connection();
        }

        private boolean knownRead;

        @Override
        public PreparedStatement prepare(String sql) throws SQLException {
          if (knownRead) {
            Runnable h = hook.getAndSet(null);
            if (h != null) {
              h.run();
            }
          }
          knownRead |= sql.startsWith("SELECT body_sha256, ");
          return s.prepare(sql);
        }

        @Override
        public void release(PreparedStatement statement) throws SQLException {
          s.release(statement);
        }
      };
    }
  }
}
