package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.FaultyDataSource;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Concurrent begins share one commit and one disk sync instead of paying one each, and an
 * operation's later writes wait only for the durability of its own begin.
 */
class GroupCommitTest {
  /**
   * The tests' own threads: on a 2-core machine the common pool has one thread, and from Java 21 on
   * its async tasks queue on it, so a task that waits for another would wait for ever.
   */
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopPool() {
    pool.shutdownNow();
  }

  @TempDir
  Path dir;

  @Test
  void beginsThatArriveDuringADiskSyncShareTheNextCommit() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + dir.resolve("j") + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    FaultyDataSource ds = new FaultyDataSource(h2);
    Ops ops = new Ops(3);
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).open()) {
      CountDownLatch release = new CountDownLatch(1);
      ds.holdFirstSync = release;
      int commitsBefore = ds.commits.get();
      int syncsBefore = ds.syncs.get();

      CompletableFuture<?> first = CompletableFuture.runAsync(() -> begin(journal, ops.newOp("{\"n\":0}")), pool);
      assertTrue(ds.firstSyncHeld.await(10, TimeUnit.SECONDS), "first begin never reached its disk sync");
      List<CompletableFuture<?>> others = new ArrayList<>();
      List<NewOperation> waiting = new ArrayList<>();
      for (int i = 1; i <= 7; i++) {
        NewOperation op = ops.newOp("{\"n\":" + i + "}");
        waiting.add(op);
        others.add(CompletableFuture.runAsync(() -> begin(journal, op), pool));
      }
      awaitInserts(ds, 8);
      assertTrue(others.stream().noneMatch(CompletableFuture::isDone), "a begin returned before its commit");
      release.countDown();
      first.get(10, TimeUnit.SECONDS);
      for (CompletableFuture<?> f : others) {
        f.get(10, TimeUnit.SECONDS);
      }

      assertEquals(2, ds.commits.get() - commitsBefore, "8 begins, 2 commits: the 7 waiting ones shared one");
      assertEquals(2, ds.syncs.get() - syncsBefore);
      for (NewOperation op : waiting) {
        assertTrue(journal.find(op.id()).isPresent());
      }
    }
  }

  @Test
  void anOperationsLaterWritesDoNotWaitForOtherOperationsBeginsButDoWaitForItsOwn() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + dir.resolve("j") + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    FaultyDataSource ds = new FaultyDataSource(h2);
    Ops ops = new Ops(5);
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).open()) {
      NewOperation durable = ops.newOp("{\"n\":1}");
      journal.begin(durable);
      CountDownLatch release = new CountDownLatch(1);
      ds.holdFirstSync = release;
      NewOperation held = ops.newOp("{\"n\":2}");
      CompletableFuture<?> heldBegin = CompletableFuture.runAsync(() -> begin(journal, held), pool);
      assertTrue(ds.firstSyncHeld.await(10, TimeUnit.SECONDS), "the second begin never reached its disk sync");

      // The first operation's claim, attempt and completion go on while the other begin is not yet durable.
      CompletableFuture<?> otherWork = CompletableFuture.runAsync(() -> {
        try {
          Lease lease = journal.claim(durable.id(), "n", Ops.T0, Duration.ofSeconds(30)).orElseThrow();
          journal.recordAttempt(durable.id(), lease, Ops.attempt(1, lease.generation(), Ops.T0));
          journal.transition(durable.id(), lease, Transition.finish(OperationState.SUCCEEDED, Ops.T0, Ops.ok("{}"), null));
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }, pool);
      otherWork.get(10, TimeUnit.SECONDS);

      // A claim of the operation whose begin is not yet durable must wait for it: it could send.
      CompletableFuture<Optional<Lease>> claimOfHeld = CompletableFuture.supplyAsync(() -> {
        try {
          return journal.claim(held.id(), "other", Ops.T0, Duration.ofSeconds(30));
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }, pool);
      assertThrows(TimeoutException.class, () -> claimOfHeld.get(200, TimeUnit.MILLISECONDS),
          "a claim returned a record that was not yet durable");
      assertTrue(!heldBegin.isDone());
      release.countDown();
      heldBegin.get(10, TimeUnit.SECONDS);
      assertTrue(claimOfHeld.get(10, TimeUnit.SECONDS).isPresent());
    }
  }

  private static void begin(JdbcJournal journal, NewOperation op) {
    try {
      journal.begin(op);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Waits (without sleeping) until the journal has executed {@code n} inserts. */
  private static void awaitInserts(FaultyDataSource ds, int n) {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (ds.inserts.get() < n) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("only " + ds.inserts.get() + " of " + n + " inserts ran");
      }
      Thread.onSpinWait();
    }
  }
}
