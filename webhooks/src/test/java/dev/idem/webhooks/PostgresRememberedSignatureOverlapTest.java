package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * On PostgreSQL (READ COMMITTED), the unit that remembers a re-signed retry's signature
 * ({@code idem_webhook_signatures}, a source whose scheme does not sign the event id) and the unit
 * of a copy of that retry under a new id, overlapping on two connections (two threads or
 * instances), must not miss each other: the copy is a replay and must not be accepted as a new
 * event (it would be stored and processed: the replay succeeds).
 *
 * <p>The overlap is made deterministic: the retry's unit stops just before it writes the
 * signature (it has read the signatures and found the event known), the copy's delivery runs on
 * another thread meanwhile, and the retry's unit goes on only once the copy's delivery has been
 * answered, or is seen waiting for a lock in {@code pg_locks}. Either state is definite; the
 * bounded poll only observes which one was reached.
 */
@ExtendWith(PostgresExtension.class)
class PostgresRememberedSignatureOverlapTest {
  static final String SECRET = "acme-s3cret";
  static final Instant T0 = Instant.parse("2026-12-07T09:00:00Z");
  static final String BODY = "{\"order\":42,\"amount\":1299}";
  static final String REPLAY = "{\"status\":\"duplicate\",\"reason\":\"replay\"}";

  final VirtualTime time = new VirtualTime(T0);

  @Test
  void aCopyOverlappingTheRetryThatRemembersItsSignatureIsAReplay(PgDatabase db) throws Exception {
    StoreOpener opener = new StoreOpener(InboxStore.SCHEMA, false, Duration.ofMillis(50), time.clock());
    AtomicReference<Runnable> beforeRemember = new AtomicReference<>();
    ExecutorService other = Executors.newSingleThreadExecutor();
    try (InboxStore store = opener.openDataSource(db.dataSource(), (name, dialect, s, version, opened) ->
        new InboxStore(dialect, new HookBeforeRemember(s, beforeRemember), opened, name))) {
      WebhookInbox inbox = WebhookInbox.over(store, time.clock());
      GenericHmac timed = GenericHmac.builder("X-Acme-Signature").signaturePrefix("sha256=").idHeader("X-Acme-Id")
          .timestampHeader("X-Acme-Time").typeHeader("X-Acme-Type").signedContent("{timestamp}.{body}").build();
      WebhookSource source = WebhookSource.builder("acme", SignatureScheme.hmac(timed)).secret(SECRET)
          .clock(time.clock()).build();
      WebhookReceiver r = WebhookReceiver.builder(source, inbox).build();
      byte[] body = BODY.getBytes(StandardCharsets.UTF_8);

      assertEquals("{\"status\":\"accepted\"}", r.handle("POST", headers("ev-1", secs()), body).body());

      // The provider retries ev-1, signed again 10 s later (a signature of its own). While its
      // unit is about to remember that signature, a copy of the retry under a new id comes in.
      time.advance(Duration.ofSeconds(10));
      String t1 = secs();
      AtomicReference<CompletableFuture<WebhookResponse>> copy = new AtomicReference<>();
      AtomicReference<String> copyState = new AtomicReference<>("not started (setup)");
      beforeRemember.set(() -> {
        CompletableFuture<WebhookResponse> f = CompletableFuture.supplyAsync(() -> {
          try {
            return r.handle("POST", headers("ev-2", t1), body);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        }, other);
        copy.set(f);
        copyState.set(awaitAnsweredOrWaiting(db, f));
      });
      WebhookResponse retried = r.handle("POST", headers("ev-1", t1), body);
      WebhookResponse copied = copy.get().get(30, TimeUnit.SECONDS);

      List<ClaimedEvent> claimed = store.claim(10, "p1", time.clock().millis(), time.clock().millis() + 60_000);
      assertAll(
          () -> assertTrue(copyState.get().equals("answered") || copyState.get().equals("waiting"),
              "the copy's delivery overlapped the retry's unit (setup): " + copyState.get()),
          () -> assertEquals("{\"status\":\"duplicate\"}", retried.body(), "the retry of ev-1 is its duplicate"),
          () -> assertEquals(REPLAY, copied.body(), "a copy of the retry under a new id, whose unit overlapped the"
              + " one remembering its signature, must be refused as a replay, not accepted (" + copyState.get()
              + " while the retry's unit was open)"),
          () -> assertEquals(List.of("ev-1"), claimed.stream().map(ClaimedEvent::eventId).toList(),
              "only ev-1 is stored to run: the copy stored as ev-2 is the same event processed twice"));
    } finally {
      other.shutdownNow();
    }
  }

  /**
   * Returns "answered" once the copy's delivery is answered, or "waiting" once a connection waits
   * for an advisory lock (the copy, since nothing else is running), whichever comes first.
   */
  private static String awaitAnsweredOrWaiting(PgDatabase db, CompletableFuture<?> copy) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
      while (System.nanoTime() < deadline) {
        if (copy.isDone()) {
          return "answered";
        }
        // This database's only: the cluster is shared, and another database's migration lock
        // waiting would let the retry's unit go on before the copy took its lock.
        try (ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
            + " AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")) {
          rs.next();
          if (rs.getInt(1) > 0) {
            return "waiting";
          }
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
      }
      return "neither answered nor waiting for a lock after 30 s";
    } catch (SQLException e) {
      throw new IllegalStateException(e);
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
   * A store that, when armed, runs a hook once just before a unit prepares its write of a
   * remembered signature (insert's unit, the event found known), its transaction still open.
   */
  static final class HookBeforeRemember extends ForwardingStore {
    private final AtomicReference<Runnable> hook;

    HookBeforeRemember(Store store, AtomicReference<Runnable> hook) {
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
          if (sql.startsWith("INSERT INTO idem_webhook_signatures")) {
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
