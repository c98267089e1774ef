package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.BeginResult;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.JournalException;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.StaleOwnerException;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.FaultyDataSource;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/** Several journal instances (standing in for the processes of a fleet) on one PostgreSQL database. */
@ExtendWith(PostgresExtension.class)
class PostgresFleetTest {
  private static final Duration LEASE = Duration.ofSeconds(30);
  private final Ops ops = new Ops(99);

  @Test
  void twoNodesResumeEveryPendingOperationExactlyOnce(PgDatabase db) throws Exception {
    int count = 60;
    try (JdbcJournal a = JdbcJournal.dataSource(db.dataSource()).open();
        JdbcJournal b = JdbcJournal.dataSource(db.dataSource()).open()) {
      List<OperationId> ids = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        NewOperation op = ops.newOp("{\"n\":" + i + "}");
        a.begin(op);
        ids.add(op.id());
      }
      Map<OperationId, String> claimedBy = new ConcurrentHashMap<>();
      AtomicInteger doubleClaims = new AtomicInteger();
      ExecutorService pool = Executors.newFixedThreadPool(4);
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> nodes = new ArrayList<>();
      for (int n = 0; n < 4; n++) {
        JdbcJournal journal = n % 2 == 0 ? a : b;
        String owner = "node-" + n;
        nodes.add(pool.submit(() -> {
          start.await();
          List<OperationRecord> due;
          while (!(due = journal.findDue(T0, null, 7)).isEmpty()) {
            for (OperationRecord r : due) {
              var lease = journal.claim(r.id(), owner, T0, LEASE);
              if (lease.isPresent()) {
                if (claimedBy.putIfAbsent(r.id(), owner) != null) {
                  doubleClaims.incrementAndGet();
                }
                journal.transition(r.id(), lease.get(),
                    Transition.finish(OperationState.SUCCEEDED, T0, Ops.ok("{}"), null));
              }
            }
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> f : nodes) {
        f.get(60, TimeUnit.SECONDS);
      }
      pool.shutdown();

      assertEquals(0, doubleClaims.get());
      assertEquals(new HashSet<>(ids), claimedBy.keySet());
      assertEquals(count, a.findByState(OperationState.SUCCEEDED, null, 1000).size());
      assertTrue(new HashSet<>(claimedBy.values()).size() > 1, "both nodes took part: " + new HashSet<>(claimedBy.values()));
    }
  }

  @Test
  void anOwnerThatPausedPastItsLeaseCannotCompleteAfterATakeover(PgDatabase db) throws Exception {
    try (JdbcJournal a = JdbcJournal.dataSource(db.dataSource()).open();
        JdbcJournal b = JdbcJournal.dataSource(db.dataSource()).open()) {
      NewOperation op = ops.newOp("{}");
      a.begin(op);
      Lease paused = a.claim(op.id(), "node-a", T0, LEASE).orElseThrow();
      assertTrue(b.claim(op.id(), "node-b", T0.plusSeconds(29), LEASE).isEmpty(), "lease still live");

      Lease takeover = b.claim(op.id(), "node-b", T0.plusSeconds(31), LEASE).orElseThrow();
      assertEquals(paused.generation() + 1, takeover.generation());

      // node-a wakes up and tries to finish with its old lease: nothing changes
      assertThrows(StaleOwnerException.class, () -> a.recordAttempt(op.id(), paused, Ops.attempt(1, 1, T0)));
      assertThrows(StaleOwnerException.class, () -> a.transition(op.id(), paused,
          Transition.finish(OperationState.SUCCEEDED, T0.plusSeconds(32), Ops.ok("{\"from\":\"a\"}"), null)));
      OperationRecord r = b.find(op.id()).orElseThrow();
      assertEquals(OperationState.IN_FLIGHT, r.state());
      assertEquals("node-b", r.owner());
      // node-a may have sent its attempt before it paused: the journal reports the takeover, and
      // records nothing for it (the executor records the ambiguous attempt: Takeover).
      assertTrue(takeover.takeover());
      assertEquals(0, r.attempts().size());

      b.transition(op.id(), takeover, Transition.finish(OperationState.SUCCEEDED, T0.plusSeconds(33),
          Ops.ok("{\"from\":\"b\"}"), null));
      assertEquals(Ops.ok("{\"from\":\"b\"}"), a.find(op.id()).orElseThrow().response());
    }
  }

  @Test
  void aRowBeingClaimedElsewhereIsSkippedNotWaitedFor(PgDatabase db) throws Exception {
    PGSimpleDataSource ds = db.dataSource();
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).open()) {
      NewOperation busy = ops.newOp("{}");
      NewOperation free = ops.newOp("{}");
      journal.begin(busy);
      journal.begin(free);
      try (Connection other = ds.getConnection()) {
        other.setAutoCommit(false);
        try (PreparedStatement ps = other.prepareStatement(
            "SELECT 1 FROM idem_operation WHERE op_key = ? FOR UPDATE")) {
          ps.setString(1, busy.id().key().value());
          ps.executeQuery().close();
        }
        assertEquals(List.of(free.id()), journal.findDue(T0, null, 10).stream().map(OperationRecord::id).toList());
        // A background pass's claims (claim, claimAll: the dispatcher's and resumePending's) skip the locked
        // row at once; the claim of an operation the app's call named waits for it, bounded (the next test).
        long start = System.nanoTime();
        assertTrue(journal.claim(busy.id(), "n", T0, LEASE).isEmpty(), "the locked row is skipped");
        assertTrue(Duration.ofNanos(System.nanoTime() - start).compareTo(JdbcJournal.CLAIM_ROW_LOCK_WAIT) < 0,
            "claim skips a locked row, it does not wait for it");
        List<OperationRecord> asRead = List.of(journal.find(busy.id()).orElseThrow(),
            journal.find(free.id()).orElseThrow());
        List<Optional<Lease>> claimed = journal.claimAll(asRead, "n", T0, LEASE);
        assertTrue(claimed.get(0).isEmpty(), "the locked row is skipped");
        assertTrue(claimed.get(1).isPresent(), "the free one is claimed");
        other.rollback();
      }
      assertTrue(journal.claim(busy.id(), "n", T0, LEASE).isPresent());
    }
  }

  /**
   * The claim of an operation an app's call named ({@code claimWaiting}) waits for another
   * transaction's lock on it, up to
   * {@link JdbcJournal#CLAIM_ROW_LOCK_WAIT}, and then returns empty, its transaction still usable;
   * a lock released within the wait is claimed through (ReviewPostgresResumeMeetsAnotherInstancesDuePageTest).
   */
  @Test
  void aNamedClaimOfARowLockedLongerThanItsWaitReturnsEmpty(PgDatabase db) throws Exception {
    PGSimpleDataSource ds = db.dataSource();
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).open()) {
      NewOperation busy = ops.newOp("{}");
      journal.begin(busy);
      try (Connection other = ds.getConnection()) {
        other.setAutoCommit(false);
        try (PreparedStatement ps = other.prepareStatement(
            "SELECT 1 FROM idem_operation WHERE op_key = ? FOR UPDATE")) {
          ps.setString(1, busy.id().key().value());
          ps.executeQuery().close();
        }
        assertTrue(journal.claimWaiting(busy.id(), "n", T0, LEASE).isEmpty());
        other.rollback();
      }
      assertEquals(OperationState.PENDING, journal.find(busy.id()).orElseThrow().state());
      assertTrue(journal.claim(busy.id(), "n", T0, LEASE).isPresent());
    }
  }

  @Test
  void concurrentBeginsOfOneKeyCreateItOnce(PgDatabase db) throws Exception {
    try (JdbcJournal a = JdbcJournal.dataSource(db.dataSource()).open();
        JdbcJournal b = JdbcJournal.dataSource(db.dataSource()).open()) {
      NewOperation op = ops.newOp("{}");
      ExecutorService pool = Executors.newFixedThreadPool(8);
      List<Future<BeginResult>> results = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        JdbcJournal j = i % 2 == 0 ? a : b;
        results.add(pool.submit(() -> j.begin(op)));
      }
      int created = 0;
      for (Future<BeginResult> f : results) {
        created += f.get(30, TimeUnit.SECONDS).created() ? 1 : 0;
      }
      pool.shutdown();
      assertEquals(1, created);
    }
  }

  @Test
  void rowsThatCannotBeReadAreQuarantined(PgDatabase db) throws Exception {
    PGSimpleDataSource ds = db.dataSource();
    NewOperation bad = ops.newOp("{}");
    NewOperation good = ops.newOp("{}");
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).open()) {
      journal.begin(bad);
      journal.begin(good);
      try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
        st.executeUpdate("UPDATE idem_operation SET request_json = 'not json' WHERE op_key = '" + bad.id().key() + "'");
      }
      assertEquals(List.of(good.id()), journal.findDue(T0, null, 10).stream().map(OperationRecord::id).toList());
      assertThrows(JournalException.class, () -> journal.find(bad.id()));
      assertEquals(List.of(bad.id().key().value()),
          journal.findQuarantined(10).stream().map(QuarantinedOperation::key).toList());
      try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
        st.executeUpdate("INSERT INTO idem_operation (scope, operation, op_key, fingerprint, request_json, state,"
            + " generation, created_at, updated_at, attempts_json) VALUES ('s', 'o', 'k', 'x', '{}', 'PARKED', 0, 0, 0,"
            + " '[]')");
      }
    }
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).open()) {
      Set<String> keys = new HashSet<>();
      journal.findQuarantined(10).forEach(q -> keys.add(q.key()));
      assertEquals(Set.of("k", bad.id().key().value()), keys, "the unknown state was found on open");
    }
  }

  @Test
  void twoNodesPurgingAtOnceDeleteEveryExpiredOperationOnceBetweenThem(PgDatabase db) throws Exception {
    int count = 40;
    try (JdbcJournal a = JdbcJournal.dataSource(db.dataSource()).purgeBatch(3).open();
        JdbcJournal b = JdbcJournal.dataSource(db.dataSource()).purgeBatch(3).open()) {
      for (int i = 0; i < count; i++) {
        NewOperation op = ops.newOp("{\"n\":" + i + "}");
        a.begin(op);
        a.abandon(op.id(), Transition.finish(OperationState.FAILED, T0, null, "expired"));
      }
      NewOperation pending = ops.newOp("{}");
      a.begin(pending);
      ExecutorService pool = Executors.newFixedThreadPool(2);
      try {
        CountDownLatch start = new CountDownLatch(1);
        // Each batch locks its rows (SKIP LOCKED): the nodes split the rows, and neither stops
        // while rows are left that the other does not hold.
        Future<Integer> byA = pool.submit(() -> {
          start.await();
          return a.purge(T0.plusSeconds(1));
        });
        Future<Integer> byB = pool.submit(() -> {
          start.await();
          return b.purge(T0.plusSeconds(1));
        });
        start.countDown();
        assertEquals(count, byA.get(30, TimeUnit.SECONDS) + byB.get(30, TimeUnit.SECONDS));
      } finally {
        pool.shutdownNow();
      }
      assertEquals(0, a.purge(T0.plusSeconds(1)));
      assertEquals(List.of(pending.id()),
          a.findByState(OperationState.PENDING, null, 10).stream().map(OperationRecord::id).toList());
      assertTrue(a.findByState(OperationState.FAILED, null, 10).isEmpty());
    }
  }

  @Test
  void aFailingDatabaseFailsBeginFastAndNothingIsSent(PgDatabase db) throws Exception {
    FaultyDataSource faulty = new FaultyDataSource(db.dataSource());
    try (JdbcJournal journal = JdbcJournal.dataSource(faulty).open()) {
      AtomicInteger sends = new AtomicInteger();
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
      faulty.failWrites = true;
      assertThrows(JournalException.class, () -> executor.execute(
          Operation.builder("charge", Ops.request("{}")).build(), (r, k) -> {
            sends.incrementAndGet();
            return Ops.ok("{}");
          }));
      assertEquals(0, sends.get());
    }
    PGSimpleDataSource down = db.cluster().dataSource(db.name());
    down.setPortNumbers(new int[] {1});
    JournalException e = assertThrows(JournalException.class, () -> JdbcJournal.dataSource(down).open());
    assertTrue(e.getMessage().contains("connection"), e.getMessage());
  }
}
