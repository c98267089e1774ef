package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;

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
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code InboxStore.insert}, on its conflicted path (the id is known, the delivery's signature not
 * remembered yet: the provider's first re-signed retry of an event), answers DUPLICATE when its
 * KNOWN read finds the event gone ("purged since the insert's conflict: it was DONE") and returns
 * at once, WITHOUT remembering the delivery's signature in {@code idem_webhook_signatures}. The
 * INSERT ... ON CONFLICT DO NOTHING takes no lock on the conflicting row, so on PostgreSQL (READ
 * COMMITTED) a {@code purgeDone} on another connection can commit between it and the KNOWN read
 * (the event's signed time is old, the re-signed retry's recent). The retry is answered DUPLICATE,
 * yet nothing holds its signature: a copy of that same signed delivery under a new event id
 * (schemes that do not sign the id) is then ACCEPTED as a new event and run, inside its timestamp
 * window. No serial order gives that: purge first, the retry is accepted as ev-1 and its signature
 * held by ev-1's row (the copy is a REPLAY); purge after, the signature is remembered with its
 * recent signed time, which the purge keeps (the copy is a REPLAY). This is the same race 88532b58
 * closed for a remembered resend (RvRtoday12RememberedRetryPurgedMidUnitTest), left open on the
 * "conflicted" branch of {@code if (known == null)}: the signature must be remembered there too
 * (or the answer be the one a serial order gives).
 *
 * <p>Deterministic: a store wrapper runs the purge (another pooled connection, as another
 * instance's purge job) just before insert's unit prepares its KNOWN read.
 */
@ExtendWith(PostgresExtension.class)
class RvRtoday13ResignedDuplicatePurgedMidUnitNotRememberedTest {
  static final Instant T0 = Instant.parse("2026-12-04T09:00:00Z");

  final VirtualTime time = new VirtualTime(T0);

  @Test
  void onPostgres(PgDatabase db) throws Exception {
    StoreOpener opener = new StoreOpener(InboxStore.SCHEMA, false, Duration.ofMillis(50), time.clock());
    AtomicReference<Runnable> beforeKnownRead = new AtomicReference<>();
    try (InboxStore store = opener.openDataSource(db.dataSource(), (name, dialect, s, version, opened) ->
        new InboxStore(dialect, new HookBeforeKnownRead(s, beforeKnownRead), opened, name))) {
      WebhookInbox inbox = WebhookInbox.over(store, time.clock());
      GenericHmac timed = GenericHmac.builder("X-Acme-Signature").signaturePrefix("sha256=").idHeader("X-Acme-Id")
          .timestampHeader("X-Acme-Time").typeHeader("X-Acme-Type").signedContent("{timestamp}.{body}").build();
      WebhookSource source = WebhookSource.builder("acme", SignatureScheme.hmac(timed))
          .secret(RvRtoday12RememberedRetryPurgedMidUnitTest.SECRET).clock(time.clock()).build();
      WebhookReceiver r = WebhookReceiver.builder(source, inbox).build();
      byte[] body = RvRtoday12RememberedRetryPurgedMidUnitTest.BODY.getBytes(StandardCharsets.UTF_8);

      assertEquals("{\"status\":\"accepted\"}", r.handle("POST", headers("ev-1", secs()), body).body());
      time.advance(Duration.ofSeconds(10));
      ClaimedEvent e = store.claim(1, "p1", time.clock().millis(), time.clock().millis() + 60_000).get(0);
      store.markDone(e, time.clock().millis()); // processed once, DONE at T0 + 10 s

      // The provider's re-signed retry of ev-1 at T0 + 400 s, while another instance's purge job
      // (keep DONE events 350 s) commits between the retry's INSERT conflict and its KNOWN read.
      time.advance(Duration.ofSeconds(390));
      String t1 = secs();
      AtomicInteger purged = new AtomicInteger(-1);
      beforeKnownRead.set(() -> purged.set(inbox.purgeDone(Duration.ofSeconds(350))));
      WebhookResponse retry = r.handle("POST", headers("ev-1", t1), body);
      if (beforeKnownRead.getAndSet(null) != null) {
        purged.set(inbox.purgeDone(Duration.ofSeconds(350)));
      }

      // An attacker's copy of that retry (same signed time, body, signature) under a new id, 5 s later.
      time.advance(Duration.ofSeconds(5));
      WebhookResponse copy = r.handle("POST", headers("ev-2", t1), body);

      List<ClaimedEvent> due = store.claim(10, "p2", time.clock().millis(), time.clock().millis() + 60_000);
      assertAll(
          () -> assertEquals(1, purged.get(), "the purge took ev-1 (setup)"),
          () -> assertEquals("{\"status\":\"duplicate\"}", retry.body(), "the retry of ev-1 (setup)"),
          () -> assertEquals("{\"status\":\"duplicate\",\"reason\":\"replay\"}", copy.body(), "a copy of ev-1's"
              + " retry (answered DUPLICATE) under a new id, inside its window, must be refused as a replay"),
          () -> assertEquals(0, due.size(), "the replayed copy was stored as a new event and would run: " + due));
    }
  }

  private String secs() {
    return Long.toString(time.clock().instant().getEpochSecond());
  }

  static java.util.Map<String, List<String>> headers(String id, String ts) throws Exception {
    return RvRtoday12RememberedRetryPurgedMidUnitTest.headers(id, ts);
  }

  /** Runs a hook once, when armed, just before a unit prepares the known-event read (KNOWN). */
  static final class HookBeforeKnownRead extends ForwardingStore {
    private final AtomicReference<Runnable> hook;

    HookBeforeKnownRead(Store store, AtomicReference<Runnable> hook) {
      super(store);
      this.hook = hook;
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

        @Override
        public PreparedStatement prepare(String sql) throws SQLException {
          if (sql.startsWith("SELECT body_sha256, ")) {
            Runnable h = hook.getAndSet(null);
            if (h != null) {
              h.run();
            }
          }
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
