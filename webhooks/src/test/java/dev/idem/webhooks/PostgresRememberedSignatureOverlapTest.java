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
import java.util.concurrent.Callable;
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
 * event (it would be stored and processed: the replay succeeds). {@code InboxStore.insert} takes an
 * advisory lock per digest the delivery is looked up by; during a secret rotation's rolling deploy
 * one instance has only the old secret (it stores and remembers the old secret's digest) and
 * another both (it looks the old one up among its others), so a lock on the first digest alone let
 * the two overlap (review rtoday15): the second and third tests.
 *
 * <p>The overlap is made deterministic: the retry's (or the first accept's) unit stops just before
 * it writes the signature (or just after its event's INSERT), the copy's delivery runs on another
 * thread meanwhile, and the unit goes on only once the copy's delivery has been answered, or is
 * seen waiting for a lock in {@code pg_locks} (this test's database only). Either state is
 * definite; the bounded poll only observes which one was reached.
 */
@ExtendWith(PostgresExtension.class)
class PostgresRememberedSignatureOverlapTest {
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
  void aCopyOverlappingTheRetryThatRemembersItsSignatureIsAReplay(PgDatabase db) throws Exception {
    StoreOpener opener = new StoreOpener(InboxStore.SCHEMA, false, Duration.ofMillis(50), time.clock());
    AtomicReference<Runnable> beforeRemember = new AtomicReference<>();
    ExecutorService other = Executors.newSingleThreadExecutor();
    try (InboxStore store = opener.openDataSource(db.dataSource(), (name, dialect, s, version, opened) ->
        new InboxStore(dialect, new HookBeforeRemember(s, beforeRemember, null), opened, name))) {
      WebhookReceiver r = receiver(WebhookInbox.over(store, time.clock()), OLD);
      byte[] body = BODY.getBytes(StandardCharsets.UTF_8);

      assertEquals("{\"status\":\"accepted\"}", r.handle("POST", headers("ev-1", secs()), body).body());

      // The provider retries ev-1, signed again 10 s later (a signature of its own). While its
      // unit is about to remember that signature, a copy of the retry under a new id comes in.
      time.advance(Duration.ofSeconds(10));
      String t1 = secs();
      Overlap copy = new Overlap();
      beforeRemember.set(copy.starting(db, other, () -> r.handle("POST", headers("ev-2", t1), body)));
      WebhookResponse retried = r.handle("POST", headers("ev-1", t1), body);
      WebhookResponse copied = copy.answer();

      List<ClaimedEvent> claimed = store.claim(10, "p1", time.clock().millis(), time.clock().millis() + 60_000);
      assertAll(
          () -> assertTrue(copy.overlapped(),
              "the copy's delivery overlapped the retry's unit (setup): " + copy.state),
          () -> assertEquals("{\"status\":\"duplicate\"}", retried.body(), "the retry of ev-1 is its duplicate"),
          () -> assertEquals(REPLAY, copied.body(), "a copy of the retry under a new id, whose unit overlapped the"
              + " one remembering its signature, must be refused as a replay, not accepted (" + copy.state
              + " while the retry's unit was open)"),
          () -> assertEquals(List.of("ev-1"), claimed.stream().map(ClaimedEvent::eventId).toList(),
              "only ev-1 is stored to run: the copy stored as ev-2 is the same event processed twice"));
    } finally {
      other.shutdownNow();
    }
  }

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
      Overlap copy = new Overlap();
      beforeRemember.set(copy.starting(db, other, () -> onA.handle("POST", headers("ev-2", t1), body)));
      WebhookResponse retried = onB.handle("POST", headers("ev-1", t1), body);
      WebhookResponse copied = copy.answer();

      List<ClaimedEvent> claimed = storeA.claim(10, "p1", time.clock().millis(), time.clock().millis() + 60_000);
      assertAll(
          () -> assertTrue(copy.overlapped(),
              "the copy's delivery overlapped the retry's unit (setup): " + copy.state),
          () -> assertEquals("{\"status\":\"duplicate\"}", retried.body(), "the retry of ev-1 is its duplicate"),
          () -> assertEquals(REPLAY, copied.body(), "a copy of the retry under a new id on the instance that has the"
              + " new secret too, overlapping the unit that remembers the retry's signature on the instance that has"
              + " only the old one, must be refused as a replay (it is, one after the other); the advisory lock is"
              + " keyed on the first digest only, so the units took different locks (" + copy.state
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
      Overlap copy = new Overlap();
      afterAccept.set(copy.starting(db, other, () -> onA.handle("POST", headers("ev-2", t0), body)));
      WebhookResponse accepted = onB.handle("POST", headers("ev-1", t0), body);
      WebhookResponse copied = copy.answer();

      List<ClaimedEvent> claimed = storeA.claim(10, "p1", time.clock().millis(), time.clock().millis() + 60_000);
      assertAll(
          () -> assertTrue(copy.overlapped(),
              "the copy's delivery overlapped the accept's unit (setup): " + copy.state),
          () -> assertEquals("{\"status\":\"accepted\"}", accepted.body(), "ev-1 is accepted"),
          () -> assertEquals(REPLAY, copied.body(), "a copy of ev-1's delivery under a new id on the instance that has"
              + " the new secret too, overlapping ev-1's accept on the instance that has only the old one, must be"
              + " refused as a replay (it is, one after the other); the advisory lock is keyed on the first digest"
              + " only (" + copy.state + " while the accept's unit was open)"),
          () -> assertEquals(List.of("ev-1"), claimed.stream().map(ClaimedEvent::eventId).toList(),
              "only ev-1 is stored to run: the copy stored as ev-2 is the same event processed twice"));
    } finally {
      other.shutdownNow();
    }
  }

  /**
   * A copy's delivery, started on {@code on} from inside another unit (a store hook), and what was
   * seen of it before that unit went on: answered, or waiting for a lock.
   */
  private static final class Overlap {
    private final AtomicReference<CompletableFuture<WebhookResponse>> copy = new AtomicReference<>();
    volatile String state = "not started (setup)";

    Runnable starting(PgDatabase db, ExecutorService on, Callable<WebhookResponse> delivery) {
      return () -> {
        CompletableFuture<WebhookResponse> f = CompletableFuture.supplyAsync(() -> {
          try {
            return delivery.call();
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        }, on);
        copy.set(f);
        state = awaitAnsweredOrWaiting(db, f);
      };
    }

    boolean overlapped() {
      return state.equals("answered") || state.equals("waiting");
    }

    WebhookResponse answer() throws Exception {
      return copy.get().get(30, TimeUnit.SECONDS);
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
