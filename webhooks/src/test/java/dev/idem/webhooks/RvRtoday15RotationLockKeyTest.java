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
 * Review of d21b2fb5 (rtoday15): the PostgreSQL advisory lock that is to serialize the unit
 * remembering a re-signed retry's signature with a copy of that retry under a new id is keyed on
 * the delivery's first digest only ({@code InboxStore.insert}: {@code signatureLockKey(src, digest)}),
 * while the copy's lookup matches the remembered signature through {@code otherDigests} too (a
 * secret rotation: the MAC under each configured secret). During a rotation's rolling deploy one
 * instance has only the old secret {@code [S1]} (it stores and locks {@code mac_S1}) and another
 * already has {@code [S2, S1]} (it locks {@code mac_S2} and looks up {@code mac_S2, mac_S1}). The
 * two units take different locks, so they overlap exactly as before the commit: the copy reads
 * the signatures before the retry's unit commits and is accepted as a new event, stored and
 * processed a second time. Done one after the other, the same copy on the same instance is
 * refused as a replay (its lookup finds {@code mac_S1}), so the overlap alone lets it through: the
 * window the commit and docs/webhooks.md say is closed stays open in the rotation case.
 *
 * <p>Deterministic as the commit's own test: the retry's unit (instance B) stops just before it
 * writes the signature, the copy runs on instance A meanwhile, and the retry's unit goes on once
 * the copy is answered or is seen waiting for an advisory lock in {@code pg_locks}. With a lock on
 * every digest the copy would wait and then be refused. The second test is the same key on the
 * first accept's side (the copy looks for the accepted event's signature through
 * {@code otherDigests} among the events' own signatures).
 */
@ExtendWith(PostgresExtension.class)
class RvRtoday15RotationLockKeyTest {
  static final String OLD = "acme-old-s3cret";
  static final String NEW = "acme-new-s3cret";
  static final Instant T0 = Instant.parse("2026-12-07T09:00:00Z");
  static final String BODY = "{\"order\":42,\"amount\":1299}";
  static final String REPLAY = "{\"status\":\"duplicate\",\"reason\":\"replay\"}";
  static final GenericHmac TIMED = GenericHmac.builder("X-Acme-Signature").signaturePrefix("sha256=")
      .idHeader("X-Acme-Id").timestampHeader("X-Acme-Time").typeHeader("X-Acme-Type")
      .signedContent("{timestamp}.{body}").build();

  final VirtualTime time = new VirtualTime(T0);

  @Test
  void aCopyOnAnInstanceWithTheNewSecretOverlappingTheRetryOnOneWithTheOldIsAReplay(PgDatabase db)
      throws Exception {
    StoreOpener opener = new StoreOpener(InboxStore.SCHEMA, false, Duration.ofMillis(50), time.clock());
    AtomicReference<Runnable> beforeRemember = new AtomicReference<>();
    ExecutorService other = Executors.newSingleThreadExecutor();
    // Instance B: only the old secret yet. Instance A: the new one added, newest first.
    try (InboxStore storeB = opener.openDataSource(db.dataSource(), (name, dialect, s, version, opened) ->
            new InboxStore(dialect, new HookBeforeRemember(s, beforeRemember, null), opened, name));
        InboxStore storeA = opener.openDataSource(db.dataSource(), (name, dialect, s, version, opened) ->
            new InboxStore(dialect, s, opened, name))) {
      WebhookReceiver onB = receiver(WebhookInbox.over(storeB, time.clock()), OLD);
      WebhookReceiver onA = receiver(WebhookInbox.over(storeA, time.clock()), NEW, OLD);
      byte[] body = BODY.getBytes(StandardCharsets.UTF_8);

      assertEquals("{\"status\":\"accepted\"}", onB.handle("POST", headers("ev-1", secs()), body).body());

      // The provider (still signing with the old secret) retries ev-1 10 s later; instance B answers
      // it. While B's unit is about to remember its signature, a copy of the retry under a new id
      // reaches instance A.
      time.advance(Duration.ofSeconds(10));
      String t1 = secs();
      AtomicReference<CompletableFuture<WebhookResponse>> copy = new AtomicReference<>();
      AtomicReference<String> copyState = new AtomicReference<>("not started (setup)");
      beforeRemember.set(() -> {
        CompletableFuture<WebhookResponse> f = CompletableFuture.supplyAsync(() -> {
          try {
            return onA.handle("POST", headers("ev-2", t1), body);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        }, other);
        copy.set(f);
        copyState.set(awaitAnsweredOrWaiting(db, f));
      });
      WebhookResponse retried = onB.handle("POST", headers("ev-1", t1), body);
      WebhookResponse copied = copy.get().get(30, TimeUnit.SECONDS);

      List<ClaimedEvent> claimed = storeA.claim(10, "p1", time.clock().millis(), time.clock().millis() + 60_000);
      assertAll(
          () -> assertTrue(copyState.get().equals("answered") || copyState.get().equals("waiting"),
              "the copy's delivery overlapped the retry's unit (setup): " + copyState.get()),
          () -> assertEquals("{\"status\":\"duplicate\"}", retried.body(), "the retry of ev-1 is its duplicate"),
          () -> assertEquals(REPLAY, copied.body(), "a copy of the retry under a new id on the instance that has the"
              + " new secret too, overlapping the unit that remembers the retry's signature on the instance that has"
              + " only the old one, must be refused as a replay (it is, one after the other); the advisory lock is"
              + " keyed on the first digest only, so the units took different locks (" + copyState.get()
              + " while the retry's unit was open)"),
          () -> assertEquals(List.of("ev-1"), claimed.stream().map(ClaimedEvent::eventId).toList(),
              "only ev-1 is stored to run: the copy stored as ev-2 is the same event processed twice"));
    } finally {
      other.shutdownNow();
    }
  }

  /**
   * The same key, the first accept's side: the original delivery of ev-1 is accepted on instance B
   * ({@code [S1]}: the event stores {@code mac_S1}) while a copy of it under a new id reaches
   * instance A ({@code [S2, S1]}: it locks {@code mac_S2} and looks for {@code mac_S1} among the
   * events' signatures, {@code otherDigests}). Different locks, so the copy reads before the
   * accept commits and is accepted too (one after the other it is refused as a replay). Not
   * introduced by d21b2fb5, but the docs it changes now say deliveries carrying the same signature
   * run one after the other; a lock on every digest (the first and the others) closes both.
   */
  @Test
  void aCopyOnAnInstanceWithTheNewSecretOverlappingTheFirstAcceptOnOneWithTheOldIsAReplay(PgDatabase db)
      throws Exception {
    StoreOpener opener = new StoreOpener(InboxStore.SCHEMA, false, Duration.ofMillis(50), time.clock());
    AtomicReference<Runnable> afterAccept = new AtomicReference<>();
    ExecutorService other = Executors.newSingleThreadExecutor();
    try (InboxStore storeB = opener.openDataSource(db.dataSource(), (name, dialect, s, version, opened) ->
            new InboxStore(dialect, new HookBeforeRemember(s, new AtomicReference<>(), afterAccept), opened, name));
        InboxStore storeA = opener.openDataSource(db.dataSource(), (name, dialect, s, version, opened) ->
            new InboxStore(dialect, s, opened, name))) {
      WebhookReceiver onB = receiver(WebhookInbox.over(storeB, time.clock()), OLD);
      WebhookReceiver onA = receiver(WebhookInbox.over(storeA, time.clock()), NEW, OLD);
      byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
      String t0 = secs();
      AtomicReference<CompletableFuture<WebhookResponse>> copy = new AtomicReference<>();
      AtomicReference<String> copyState = new AtomicReference<>("not started (setup)");
      afterAccept.set(() -> {
        CompletableFuture<WebhookResponse> f = CompletableFuture.supplyAsync(() -> {
          try {
            return onA.handle("POST", headers("ev-2", t0), body);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        }, other);
        copy.set(f);
        copyState.set(awaitAnsweredOrWaiting(db, f));
      });
      WebhookResponse accepted = onB.handle("POST", headers("ev-1", t0), body);
      WebhookResponse copied = copy.get().get(30, TimeUnit.SECONDS);

      List<ClaimedEvent> claimed = storeA.claim(10, "p1", time.clock().millis(), time.clock().millis() + 60_000);
      assertAll(
          () -> assertTrue(copyState.get().equals("answered") || copyState.get().equals("waiting"),
              "the copy's delivery overlapped the accept's unit (setup): " + copyState.get()),
          () -> assertEquals("{\"status\":\"accepted\"}", accepted.body(), "ev-1 is accepted"),
          () -> assertEquals(REPLAY, copied.body(), "a copy of ev-1's delivery under a new id on the instance that has"
              + " the new secret too, overlapping ev-1's accept on the instance that has only the old one, must be"
              + " refused as a replay (it is, one after the other); the advisory lock is keyed on the first digest"
              + " only (" + copyState.get() + " while the accept's unit was open)"),
          () -> assertEquals(List.of("ev-1"), claimed.stream().map(ClaimedEvent::eventId).toList(),
              "only ev-1 is stored to run: the copy stored as ev-2 is the same event processed twice"));
    } finally {
      other.shutdownNow();
    }
  }

  private WebhookReceiver receiver(WebhookInbox inbox, String... secrets) {
    WebhookSource.Builder b = WebhookSource.builder("acme", SignatureScheme.hmac(TIMED)).clock(time.clock());
    for (String s : secrets) {
      b.secret(s);
    }
    return WebhookReceiver.builder(b.build(), inbox).build();
  }

  /**
   * "answered" once the copy is answered, "waiting" once a connection waits for an advisory lock in
   * this test's database (the cluster is shared), whichever comes first.
   */
  private static String awaitAnsweredOrWaiting(PgDatabase db, CompletableFuture<?> copy) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
      while (System.nanoTime() < deadline) {
        if (copy.isDone()) {
          return "answered";
        }
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

  /** The provider's delivery, signed with the old secret only (it has not switched yet). */
  static Map<String, List<String>> headers(String id, String ts) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(OLD.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    String sig = "sha256=" + HexFormat.of().formatHex(mac.doFinal((ts + "." + BODY).getBytes(StandardCharsets.UTF_8)));
    return Map.of("X-Acme-Signature", List.of(sig), "X-Acme-Id", List.of(id), "X-Acme-Time", List.of(ts),
        "X-Acme-Type", List.of("order.paid"));
  }

  /**
   * Runs a hook once, when armed, just before a unit prepares its write of a remembered signature
   * ({@code hook}), or just after its accept's INSERT of an event ran ({@code afterAccept}), its
   * transaction still open either way.
   */
  static final class HookBeforeRemember extends ForwardingStore {
    private final AtomicReference<Runnable> hook;
    private final AtomicReference<Runnable> afterAccept;

    HookBeforeRemember(Store store, AtomicReference<Runnable> hook, AtomicReference<Runnable> afterAccept) {
      super(store);
      this.hook = hook;
      this.afterAccept = afterAccept == null ? new AtomicReference<>() : afterAccept;
    }

    @Override
    public <T> T write(Durability durability, Object row, SqlWork<T> work) throws IdempotencyException {
      if (hook.get() == null && afterAccept.get() == null) {
        return store.write(durability, row, work);
      }
      SqlWork<T> wrapped = work instanceof SingleStatementWork<T>
          ? SqlWork.singleStatement(s -> work.run(hooked(s)))
          : s -> work.run(hooked(s));
      return store.write(durability, row, wrapped);
    }

    private SqlSession hooked(SqlSession s) {
      AtomicReference<PreparedStatement> accepting = new AtomicReference<>();
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
          PreparedStatement ps = s.prepare(sql);
          if (sql.startsWith("INSERT INTO idem_webhook_inbox ")) {
            accepting.set(ps);
          }
          return ps;
        }

        @Override
        public void release(PreparedStatement statement) throws SQLException {
          s.release(statement);
          if (statement == accepting.get()) {
            Runnable h = afterAccept.getAndSet(null);
            if (h != null) {
              h.run();
            }
          }
        }
      };
    }
  }
}
