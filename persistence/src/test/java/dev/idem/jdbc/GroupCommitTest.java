package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.NewOperation;
import dev.idem.jdbc.support.FaultyDataSource;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Concurrent begins share one commit and one disk sync instead of paying one each. */
class GroupCommitTest {
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

      CompletableFuture<?> first = CompletableFuture.runAsync(() -> begin(journal, ops.newOp("{\"n\":0}")));
      assertTrue(ds.firstSyncHeld.await(10, TimeUnit.SECONDS), "first begin never reached its disk sync");
      List<CompletableFuture<?>> others = new ArrayList<>();
      List<NewOperation> waiting = new ArrayList<>();
      for (int i = 1; i <= 7; i++) {
        NewOperation op = ops.newOp("{\"n\":" + i + "}");
        waiting.add(op);
        others.add(CompletableFuture.runAsync(() -> begin(journal, op)));
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
