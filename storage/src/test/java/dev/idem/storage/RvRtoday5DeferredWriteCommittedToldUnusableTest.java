package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.JournalException;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review rtoday5 (commit eaad8731, {@code SingleConnectionStore.awaitRound}'s last check): a write
 * whose unit ended at once (a DEFERRED write, {@code mustBeDurable <= durableSeq}) is checked with
 * {@code if (waiter.wrote == 0 || waiter.wrote > durableSeq) failIfBroken();}, on the assumption
 * written in its comment: "a write not durable yet (it would be rolled back), is refused as
 * before". That is false when a commit round has already COMMITTED the write and the store broke
 * in that round's disk sync (or its file check): nothing rolls a commit back; the round's own
 * callers are told {@link CommitUnconfirmedException} (committed or not, unknown), but this caller,
 * whose write is in the very same commit, gets the plain "unusable" {@link JournalException},
 * which the journal explains as nothing done (a claim: "nothing was sent for this attempt; the
 * operation keeps its last durable state"; the commit says NOT_BEGUN for begin), while the reopened
 * store holds the write. In production the window is the caller's wake-up: a caller whose unit was
 * run by the lock holder (flat combining) is woken after the holder lets the lock go, and a round
 * taken by another caller meanwhile commits its write and fails its sync before it runs its check.
 *
 * <p>Made deterministic without timing: the lock holder runs B's DEFERRED write, then a queued
 * unit whose work makes a nested SYNC write (a unit run from inside another's work runs in place,
 * as the store allows), and that nested write's commit round commits B's write and fails its disk
 * sync. B's caller is woken only after that, when the holder lets the lock go.
 */
class RvRtoday5DeferredWriteCommittedToldUnusableTest {
  @TempDir
  Path dir;

  @Test
  void aDeferredWriteCommittedByARoundWhoseSyncFailedIsNotToldPlainUnusable() throws Exception {
    Path db = dir.resolve("j.db");
    Connection connection = DriverManager.getConnection("jdbc:sqlite:" + db);
    try (Statement st = connection.createStatement()) {
      st.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)");
    }
    AtomicBoolean failSync = new AtomicBoolean();
    DiskSync sync = new DiskSync() {
      @Override
      public void sync() throws IOException {
        if (failSync.get()) {
          throw new IOException("EIO (injected: the disk sync of the round failed)");
        }
      }

      @Override
      public void close() {}
    };
    SingleConnectionStore store = new SingleConnectionStore("journal", "t", connection, sync, Duration.ofHours(1),
        false);
    Queue<?> queue = queueOf(store);
    ExecutorService threads = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "rvrtoday5-caller");
      t.setDaemon(true);
      return t;
    });
    try {
      // Z holds the statement lock: its unit's work waits.
      CountDownLatch holding = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      Future<?> z = threads.submit(() -> store.read(null, s -> {
        holding.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
        return null;
      }));
      assertTrue(holding.await(10, TimeUnit.SECONDS));

      // B's DEFERRED write queues behind it.
      Future<?> b = threads.submit(() -> store.write(Durability.DEFERRED, "b", s -> insert(s, 2)));
      awaitQueued(queue, 1);
      // Then a unit whose work makes a SYNC write of its own, whose round's sync fails.
      AtomicReference<Throwable> nested = new AtomicReference<>();
      // (A single-statement unit: no savepoint of its own, so nothing of it outlives the nested commit.)
      Future<?> q = threads.submit(() -> store.read(null, SqlWork.singleStatement(s -> {
        failSync.set(true);
        try {
          store.write(Durability.SYNC, "q", s2 -> insert(s2, 3));
        } catch (Exception e) {
          nested.set(e);
        }
        return null;
      })));
      awaitQueued(queue, 2);
      release.countDown();

      outcome(z);
      outcome(q);
      Throwable bOutcome = outcome(b);
      assertNotNull(nested.get(), "premise: the nested write's round failed");
      assertTrue(nested.get() instanceof CommitUnconfirmedException,
          "premise: the round's own caller is told its commit is unconfirmed: " + nested.get());
      store.close();

      int rowsOfB;
      try (Connection check = DriverManager.getConnection("jdbc:sqlite:" + db);
          Statement st = check.createStatement();
          ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM t WHERE id = 2")) {
        rs.next();
        rowsOfB = rs.getInt(1);
      }
      assertEquals(1, rowsOfB, "premise: the failed round committed B's write; the reopened store holds it");
      if (bOutcome instanceof JournalException && !(bOutcome instanceof CommitUnconfirmedException)) {
        fail("B's write is in the database (committed by the round whose sync failed), but B was told the plain"
            + " \"unusable\" JournalException that callers read as nothing written: " + bOutcome);
      }
    } finally {
      threads.shutdownNow();
    }
  }

  private static int insert(SqlSession s, int id) throws java.sql.SQLException {
    try (PreparedStatement ps = s.connection().prepareStatement("INSERT INTO t (id) VALUES (?)")) {
      ps.setInt(1, id);
      return ps.executeUpdate();
    }
  }

  private static Queue<?> queueOf(SingleConnectionStore store) throws ReflectiveOperationException {
    Field f = SingleConnectionStore.class.getDeclaredField("queue");
    f.setAccessible(true);
    return (Queue<?>) f.get(store);
  }

  private static void awaitQueued(Queue<?> queue, int n) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (queue.size() < n) {
      if (System.nanoTime() > deadline) {
        fail("the caller never queued its unit");
      }
      Thread.onSpinWait(); // waits for a state (the unit listed in the queue), not for a race
    }
  }

  private static Throwable outcome(Future<?> call) throws InterruptedException {
    try {
      call.get(10, TimeUnit.SECONDS);
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (java.util.concurrent.TimeoutException e) {
      fail("a call is still waiting after 10 s");
      return null;
    }
  }
}
