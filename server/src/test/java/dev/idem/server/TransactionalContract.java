package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.spi.StoredRecord;
import dev.idem.server.support.AppDb;
import dev.idem.core.testing.VirtualTime;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Transactional mode (issue 27, seed 000's strongest design) on each database: the claim, the
 * app's write and the stored result commit in one transaction on the app's connection. Effects are
 * the app's own rows, counted per operation.
 */
abstract class TransactionalContract {
  final VirtualTime time = new VirtualTime();
  AppDb db;
  JdbcIdempotencyStore store;
  IdempotencyGuard guard;
  final ExecutorService pool = Executors.newFixedThreadPool(2);

  abstract AppDb open() throws Exception;

  void start(Consumer<IdempotencyGuard.Builder> settings) throws Exception {
    if (db == null) {
      db = open();
      store = db.openStore();
      db.createOrders();
    }
    if (guard != null) {
      guard.close();
    }
    IdempotencyGuard.Builder b = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .purgeInterval(null);
    settings.accept(b);
    guard = b.build();
  }

  @AfterEach
  void tearDown() {
    pool.shutdownNow();
    if (guard != null) {
      guard.close();
    }
    if (store != null) {
      store.close();
    }
  }

  static GuardRequest order(String key, String item) {
    return new GuardRequest("POST", "/orders", null, "application/json", key == null ? List.of() : List.of(key),
        "tenant-1", GuardRequest.BodyReader.of(("{\"item\":\"" + item + "\"}").getBytes(StandardCharsets.UTF_8)));
  }

  static String op(String key) {
    return new RecordId("tenant-1", "POST /orders", key).operationId();
  }

  /** Holds a handler until the test releases it. */
  static void hold(CountDownLatch release) {
    try {
      assertTrue(release.await(20, TimeUnit.SECONDS), "never released");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** The business action: one order row, then the answer {@code status} with the operation id. */
  static TransactionalHandler ordering(int status) {
    return (c, claim, body) -> {
      AppDb.insertOrder(c, claim.operationId(), new String(body, StandardCharsets.UTF_8));
      return CapturedResponse.json(status, "{\"id\":\"" + claim.operationId() + "\"}")
          .withHeader("Location", "/orders/" + claim.operationId());
    };
  }

  @Test
  void theClaimTheEffectAndTheResultCommitTogetherAndARetryIsReplayed() throws Exception {
    start(b -> {});
    GuardResponse first = guard.inTransaction(db.dataSource(), order("k1", "A1"), ordering(201));
    GuardResponse again = guard.inTransaction(db.dataSource(), order("k1", "A1"), ordering(201));

    assertEquals(201, first.status());
    assertNull(first.header(IdempotencyGuard.REPLAYED_HEADER));
    assertEquals(201, again.status());
    assertEquals("true", again.header(IdempotencyGuard.REPLAYED_HEADER));
    assertEquals(first.bodyUtf8(), again.bodyUtf8());
    assertEquals("/orders/" + op("k1"), again.header("Location"));
    assertEquals(1, db.orders(op("k1")), "one effect");
    StoredRecord r = store.find(new RecordId("tenant-1", "POST /orders", "k1")).orElseThrow();
    assertEquals(RecordState.COMPLETED, r.state(), "never committed in flight: no lease to wait out");
    assertEquals(0, store.stats(time.now()).inFlight());
  }

  /**
   * A caller no database keeps as given (a NUL, which PostgreSQL refuses; an unpaired surrogate,
   * which the drivers write as '?') is refused before the transaction: the handler never runs, and
   * a 400 says not to retry. On PostgreSQL each attempt was answered 503, a retry invited forever.
   */
  @Test
  void aCallerNoDatabaseKeepsAsGivenIsRefusedBeforeTheHandlerRuns() throws Exception {
    start(b -> {});
    for (String caller : List.of("tenant\u0000b", "t\uD800")) {
      GuardRequest r = new GuardRequest("POST", "/orders", null, "application/json", List.of("k-nul"), caller,
          GuardRequest.BodyReader.of("{\"item\":\"A1\"}".getBytes(StandardCharsets.UTF_8)));
      GuardResponse refused = guard.inTransaction(db.dataSource(), r, (c, claim, body) -> {
        throw new AssertionError("the handler ran for an identity the store cannot keep");
      });
      assertEquals(400, refused.status());
      assertNull(refused.header("Retry-After"));
    }
    assertEquals(0, db.records());
  }

  @Test
  void aHandlerThatThrowsLeavesNeitherRecordNorEffectAndTheRetryRunsOnce() throws Exception {
    start(b -> {});
    SQLException boom = new SQLException("the app failed after its write");
    SQLException thrown = assertThrows(SQLException.class, () -> guard.inTransaction(db.dataSource(),
        order("k2", "A1"), (c, claim, body) -> {
          AppDb.insertOrder(c, claim.operationId(), "A1");
          throw boom;
        }));
    assertSame(boom, thrown);
    assertEquals(0, db.orders(op("k2")));
    assertEquals(0, db.records());

    assertEquals(201, guard.inTransaction(db.dataSource(), order("k2", "A1"), ordering(201)).status());
    assertEquals(1, db.orders(op("k2")));
  }

  /**
   * Issue 27: a handler that committed its effect and then answered 500 ran again on the retry. In
   * transactional mode the 500 commits with its effect (the default policy stores it), so the
   * retry gets it back, and the effect happened once.
   */
  @Test
  void a500CommitsWithItsEffectAndIsReplayed() throws Exception {
    start(b -> {});
    assertEquals(500, guard.inTransaction(db.dataSource(), order("k5", "A1"), ordering(500)).status());
    GuardResponse retry = guard.inTransaction(db.dataSource(), order("k5", "A1"), ordering(201));
    assertEquals(500, retry.status());
    assertEquals("true", retry.header(IdempotencyGuard.REPLAYED_HEADER));
    assertEquals(1, db.orders(op("k5")));
  }

  @Test
  void a503RollsBackTheEffectWithTheClaimSoTheRetryRunsOnce() throws Exception {
    start(b -> {});
    assertEquals(503, guard.inTransaction(db.dataSource(), order("k6", "A1"), ordering(503)).status());
    assertEquals(0, db.orders(op("k6")), "released: the effect rolled back with the claim");
    assertEquals(0, db.records());
    assertEquals(201, guard.inTransaction(db.dataSource(), order("k6", "A1"), ordering(201)).status());
    assertEquals(1, db.orders(op("k6")));
  }

  @Test
  void aReusedKeyIsRefusedAndRunsNothing() throws Exception {
    start(b -> {});
    guard.inTransaction(db.dataSource(), order("k7", "A1"), ordering(201));
    GuardResponse reused = guard.inTransaction(db.dataSource(), order("k7", "B2"), ordering(201));
    assertEquals(422, reused.status());
    assertEquals(1, db.orders(op("k7")));
  }

  @Test
  void aConcurrentDuplicateWaitsOnTheLockThenGetsTheReplay() throws Exception {
    start(b -> {});
    CountDownLatch inHandler = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Future<GuardResponse> first = pool.submit(() -> guard.inTransaction(db.dataSource(), order("k8", "A1"),
        (c, claim, body) -> {
          AppDb.insertOrder(c, claim.operationId(), "A1");
          inHandler.countDown();
          TransactionalContract.hold(release);
          return CapturedResponse.json(201, "{\"id\":\"first\"}");
        }));
    assertTrue(inHandler.await(20, TimeUnit.SECONDS));
    Future<GuardResponse> duplicate = pool.submit(() -> guard.inTransaction(db.dataSource(), order("k8", "A1"),
        ordering(201)));
    // The duplicate can only wait: the first holds the key (and, on SQLite, the database) until it commits.
    assertThrows(java.util.concurrent.TimeoutException.class, () -> duplicate.get(300, TimeUnit.MILLISECONDS));
    release.countDown();

    assertEquals(201, first.get(20, TimeUnit.SECONDS).status());
    GuardResponse second = duplicate.get(20, TimeUnit.SECONDS);
    assertEquals("{\"id\":\"first\"}", second.bodyUtf8(), "the duplicate got the first request's result");
    assertEquals("true", second.header(IdempotencyGuard.REPLAYED_HEADER));
    assertEquals(1, db.orders(op("k8")));
  }

  @Test
  void joinTransactionLeavesTheCommitToTheCaller() throws Exception {
    start(b -> {});
    try (Connection c = db.dataSource().getConnection()) {
      c.setAutoCommit(false);
      assertEquals(201, guard.joinTransaction(c, order("k9", "A1"), ordering(201)).status());
      c.rollback(); // the transaction manager's decision
      assertEquals(0, db.orders(op("k9")));
      assertEquals(0, db.records(), "rolled back by the caller: no record, no effect");

      assertEquals(201, guard.joinTransaction(c, order("k9", "A1"), ordering(201)).status());
      c.commit();
      assertEquals(1, db.orders(op("k9")));

      GuardResponse again = guard.joinTransaction(c, order("k9", "A1"), ordering(201));
      c.commit();
      assertEquals("true", again.header(IdempotencyGuard.REPLAYED_HEADER));
      assertEquals(1, db.orders(op("k9")));
    }
  }

  @Test
  void joinTransactionRollsBackToItsSavepointOnA503AndKeepsTheCallersWork() throws Exception {
    start(b -> {});
    try (Connection c = db.dataSource().getConnection()) {
      c.setAutoCommit(false);
      AppDb.insertOrder(c, "audit", "before the guard");
      assertEquals(503, guard.joinTransaction(c, order("k10", "A1"), ordering(503)).status());
      c.commit();
    }
    assertEquals(1, db.orders("audit"), "the caller's own write before the guard's savepoint commits");
    assertEquals(0, db.orders(op("k10")));
    assertEquals(0, db.records());
  }

  @Test
  void joinTransactionNeedsATransaction() throws Exception {
    start(b -> {});
    try (Connection c = db.dataSource().getConnection()) {
      assertTrue(c.getAutoCommit());
      assertThrows(IllegalStateException.class, () -> guard.joinTransaction(c, order("k11", "A1"), ordering(201)));
    }
  }

  @Test
  void theGuardRestoresTheConnectionsAutoCommit() throws Exception {
    start(b -> {});
    try (Connection c = db.dataSource().getConnection()) {
      guard.inTransaction(c, order("k12", "A1"), ordering(201));
      assertTrue(c.getAutoCommit());
    }
  }

  @Test
  void aRequestWithoutAKeyOnARouteThatNeedsNoneRunsInATransactionUnguarded() throws Exception {
    start(b -> b.keyRequiredMethods(java.util.Set.of()));
    GuardResponse r = guard.inTransaction(db.dataSource(), order(null, "A1"), (c, claim, body) -> {
      assertNull(claim);
      AppDb.insertOrder(c, "unguarded", "A1");
      return CapturedResponse.json(201, "{}");
    });
    assertEquals(201, r.status());
    assertEquals(1, db.orders("unguarded"));
    assertEquals(0, db.records());
  }

  @Test
  void aStoreThatIsNotJdbcIsRefused() throws Exception {
    start(b -> {});
    try (IdempotencyGuard memory = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).purgeInterval(null)
        .build()) {
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> memory.inTransaction(db.dataSource(), order("k13", "A1"), ordering(201)));
      assertTrue(e.getMessage().contains("JdbcIdempotencyStore"), e.getMessage());
      assertFalse(db.orders(op("k13")) > 0);
    }
  }
}
