package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.ZoneOffset;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Review (rpg): the PostgreSQL journal runs every unit of work at whatever isolation level the
 * app's connections carry ({@code DataSourceStore.inTransaction} never sets one), but its claim
 * protocol ({@code SELECT ... FOR UPDATE [SKIP LOCKED]} then a fenced UPDATE, see
 * {@code JdbcJournal.claim} / {@code OperationTable.selectForClaimWaiting}) relies on READ
 * COMMITTED's re-read of a row whose lock it waited for. A database (or role, or pool:
 * HikariCP {@code transactionIsolation}) whose default is REPEATABLE READ or SERIALIZABLE, a
 * common DBA choice, makes the named claim of an operation that another instance claims at the
 * same moment fail with SQLState 40001 ("could not serialize access due to concurrent update"):
 * the app's {@code resume(id)} / execute of an existing operation gets a journal failure
 * (JournalException, "the database failed") instead of the documented OperationPendingException
 * ("another instance holds it; call again"), exactly in the two-instances race the fleet docs
 * promise to handle. Nothing in docs/fleet.md or the Javadoc says the journal needs READ COMMITTED.
 *
 * <p>The same unpinned isolation breaks the schema migration's lock-then-read
 * ({@code Migrator.migrateInTransaction}: its transaction's snapshot is taken by the first query,
 * before {@code pg_advisory_xact_lock} waits): two pods opening a fresh database at once (a
 * rolling deploy, two replicas starting) under REPEATABLE READ, the second to get the lock reads
 * the version table through its old snapshot, finds no version and migrates again: its open fails
 * (the app does not start), where under READ COMMITTED it finds the schema current.
 *
 * <p>The fix: every transaction of the journal on PostgreSQL starts with {@code SET TRANSACTION
 * ISOLATION LEVEL READ COMMITTED} ({@code Dialect.transactionStartSql}).
 *
 * <p>The claim race cannot fail falsely, though it relies on the named claim's 1.5 s row-lock wait
 * ({@code JdbcJournal.CLAIM_ROW_LOCK_WAIT}): the answer it asserts does not depend on when pod-a's
 * commit lands. If it lands within pod-b's wait, pod-b re-reads the row (READ COMMITTED) and finds
 * pod-a's live lease: pending. If a stalled machine delays it past the wait, pod-b's claim is not
 * granted the lock in time and reports the operation not claimable now: pending too, with nothing
 * sent and pod-a's claim in the row. The one timing-dependent step, seeing pod-b wait before the
 * commit, ends the test as aborted (inconclusive), not failed, when pod-b's claim was over before
 * its wait was seen and it had run as long as that wait. Under the defect, a stall of that length
 * could only hide it (a false pass), never report one that is not there. The migration race has
 * no timeout: the gate holds the advisory lock until both pods wait for it.
 */
@ExtendWith(PostgresExtension.class)
class RvRpgRepeatableReadIsolationTest {
  /**
   * A thread per task: these tasks block until each other's progress, and from JDK 25 on the
   * default async pool of a 2-CPU machine (parallelism 1) runs them one after the other.
   */
  private static final java.util.concurrent.Executor THREAD_PER_TASK = task -> new Thread(task).start();

  @Test
  void aNamedClaimRacingAnotherInstancesClaimIsPendingUnderRepeatableRead(PgDatabase db) throws Exception {
    try (Connection admin = db.dataSource().getConnection(); Statement st = admin.createStatement()) {
      // The DBA's default for this database; every new session of the app gets it.
      st.execute("ALTER DATABASE \"" + db.name() + "\" SET default_transaction_isolation TO 'repeatable read'");
    }
    NewOperation op = new Ops(41).newOp("{\"n\":1}");
    String key = op.id().key().value();
    AtomicInteger sends = new AtomicInteger();
    try (JdbcJournal journal = JdbcJournal.dataSource(db.dataSource()).open();
        IdempotentExecutor podB = IdempotentExecutor.builder().journal(journal).owner("pod-b")
            .clock(Clock.fixed(Ops.T0.plusSeconds(1), ZoneOffset.UTC)).build();
        Connection podA = db.dataSource().getConnection();
        Connection watcher = db.dataSource().getConnection()) {
      journal.begin(op); // PENDING, nobody holds it
      // Another instance (pod-a) claims it: its transaction has updated the row and not yet committed.
      podA.setAutoCommit(false);
      try (PreparedStatement ps = podA.prepareStatement("UPDATE idem_operation SET state = 'IN_FLIGHT',"
          + " owner = 'pod-a', generation = generation + 1, lease_expires_at = ? WHERE op_key = ?")) {
        ps.setLong(1, (Ops.T0.getEpochSecond() + 3600) * 1_000_000_000L);
        ps.setString(2, key);
        assertEquals(1, ps.executeUpdate());
      }
      // pod-b's app calls resume(id) on the same operation: its named claim waits for pod-a's lock.
      long podBStarted = System.nanoTime();
      CompletableFuture<Object> podBResume = CompletableFuture.supplyAsync(() -> {
        try {
          return podB.resume(op.id(), (request, k) -> {
            sends.incrementAndGet();
            return Ops.ok("{\"id\":1}");
          });
        } catch (Throwable t) {
          return t;
        }
      }, THREAD_PER_TASK);
      awaitALockWait(watcher, podBResume, podBStarted);
      podA.commit(); // pod-a's claim lands while pod-b waits

      Object outcome = podBResume.get(30, TimeUnit.SECONDS);
      if (!(outcome instanceof OperationPendingException)) {
        fail("pod-b's named claim of an operation pod-a claimed at the same moment, on a database whose default"
            + " isolation is REPEATABLE READ, ended with " + outcome + " instead of OperationPendingException"
            + (outcome instanceof Throwable t && t.getCause() != null ? " (cause: " + t.getCause() + ")" : ""),
            outcome instanceof Throwable t ? t : null);
      }
      assertEquals(0, sends.get());
      OperationRecord r = journal.find(op.id()).orElseThrow();
      assertEquals(OperationState.IN_FLIGHT, r.state());
    }
  }

  @Test
  void twoPodsOpeningAFreshDatabaseAtOnceBothOpenUnderRepeatableRead(PgDatabase db) throws Exception {
    try (Connection admin = db.dataSource().getConnection(); Statement st = admin.createStatement()) {
      st.execute("ALTER DATABASE \"" + db.name() + "\" SET default_transaction_isolation TO 'repeatable read'");
    }
    try (Connection gate = db.dataSource().getConnection(); Connection watcher = db.dataSource().getConnection()) {
      // Hold the migration's advisory lock (Dialect.POSTGRESQL's), so that both pods reach it and wait.
      gate.setAutoCommit(false);
      try (Statement st = gate.createStatement()) {
        st.execute("SELECT pg_advisory_xact_lock(1768187245)");
      }
      CompletableFuture<Object> podA = CompletableFuture.supplyAsync(() -> open(db), THREAD_PER_TASK);
      CompletableFuture<Object> podB = CompletableFuture.supplyAsync(() -> open(db), THREAD_PER_TASK);
      awaitLockWaits(watcher, 2, podA, podB);
      gate.rollback(); // one pod migrates, then the other
      Object a = podA.get(60, TimeUnit.SECONDS);
      Object b = podB.get(60, TimeUnit.SECONDS);
      try {
        for (Object opened : new Object[] {a, b}) {
          if (!(opened instanceof JdbcJournal)) {
            fail("two pods opening a fresh database at once, whose default isolation is REPEATABLE READ: one open"
                + " failed: " + opened + (opened instanceof Throwable t && t.getCause() != null
                ? " (cause: " + t.getCause() + ")" : ""), opened instanceof Throwable t ? t : null);
          }
        }
      } finally {
        for (Object opened : new Object[] {a, b}) {
          if (opened instanceof JdbcJournal j) {
            j.close();
          }
        }
      }
    }
  }

  private static Object open(PgDatabase db) {
    try {
      return JdbcJournal.dataSource(db.dataSource()).open();
    } catch (Throwable t) {
      return t;
    }
  }

  /** Waits (bounded) until {@code n} sessions of this database wait for a lock, or a pod is done. */
  private static void awaitLockWaits(Connection watcher, int n, CompletableFuture<?>... pods) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      for (CompletableFuture<?> pod : pods) {
        if (pod.isDone()) {
          fail("a pod's open ended while another held the migration lock: " + pod.join());
        }
      }
      try (Statement st = watcher.createStatement();
          ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
              + " AND wait_event_type = 'Lock'")) {
        rs.next();
        if (rs.getInt(1) >= n) {
          return;
        }
      }
      Thread.onSpinWait();
    }
    fail("the pods never both waited for the migration lock");
  }

  /**
   * Waits (bounded) until some session of this database waits for a row lock. A waiter that ended
   * unseen after running as long as the claim's row-lock wait may have waited while this thread was
   * stalled: that run shows nothing either way, and the test aborts as inconclusive.
   */
  private static void awaitALockWait(Connection watcher, CompletableFuture<?> waiter, long startedNanos)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < deadline && !waiter.isDone()) {
      try (Statement st = watcher.createStatement();
          ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
              + " AND wait_event_type = 'Lock'")) {
        rs.next();
        if (rs.getInt(1) > 0) {
          return;
        }
      }
      Thread.onSpinWait();
    }
    if (waiter.isDone() && System.nanoTime() - startedNanos >= TimeUnit.MILLISECONDS.toNanos(1500)) {
      Assumptions.abort("inconclusive: pod-b's claim ended before its row-lock wait was seen, after running at"
          + " least as long as that wait (1.5 s): the machine stalled this thread; outcome " + waiter.join());
    }
    fail("pod-b's claim never waited for pod-a's row lock (done: " + waiter.isDone() + ", "
        + (waiter.isDone() ? waiter.join() : "") + ")");
  }
}
