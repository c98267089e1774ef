package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationState;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.support.FaultyDataSource;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A begin whose thread is interrupted while another caller's commit round syncs the disk (outside
 * the statement lock) has already run its INSERT in the open transaction, and the next commit (the
 * other caller's, the close's) makes it durable whether or not the begin waits for it. It used to
 * leave with a JournalException saying "nothing was sent: an operation with no durable record is
 * never sent", while the journal kept the operation, IN_FLIGHT, to be recovered and sent after a
 * reopen (and its caller may have retried the payment with a new key). What the caller is told
 * must be what the journal keeps: the begin waits for its commit, returns the operation, and
 * leaves the interrupt set for the caller to see.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class InterruptedBeginTest {
  @TempDir
  Path dir;

  @Test
  void anInterruptedBeginWhoseInsertRanWaitsForItsCommitAndKeepsTheInterrupt() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + dir.resolve("j") + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    FaultyDataSource ds = new FaultyDataSource(h2);
    Ops ops = new Ops(11);
    NewOperation other = ops.newOp("{\"n\":0}");
    NewOperation interrupted = ops.newOp("{\"n\":1}");
    Thread caller = Thread.currentThread();
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).open()) {
      CountDownLatch release = new CountDownLatch(1);
      ds.holdFirstSync = release;
      int insertsBefore = ds.inserts.get();
      // On a thread of its own: the first begin must run beside this one. CompletableFuture's
      // default executor is, from JDK 25 on with 2 CPUs, the common pool with one worker, which a
      // task an earlier test left blocked there would hold back.
      CompletableFuture<?> first = CompletableFuture.runAsync(() -> {
        try {
          journal.begin(other);
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      }, task -> new Thread(task, "first-begin").start());
      assertTrue(ds.firstSyncHeld.await(10, TimeUnit.SECONDS), "the first begin never reached its disk sync");
      // Releases the held sync once the interrupted begin has run its INSERT and parked for the
      // round: it must not wait for the caller, which now waits for that round.
      Thread releaser = new Thread(() -> {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!(ds.inserts.get() > insertsBefore + 1 && caller.getState() == Thread.State.WAITING)
            && System.nanoTime() < deadline) {
          Thread.onSpinWait();
        }
        release.countDown();
      });
      releaser.setDaemon(true);
      releaser.start();

      BeginResult begun;
      boolean interruptKept;
      Thread.currentThread().interrupt(); // the caller's task is cancelled while its begin waits
      try {
        begun = journal.beginAndClaim(interrupted, "node-1", Duration.ofMinutes(2));
      } finally {
        interruptKept = Thread.interrupted();
        release.countDown();
      }
      assertTrue(interruptKept, "the caller's interrupt is left for it to see");
      assertTrue(begun.created());
      assertEquals(OperationState.IN_FLIGHT, begun.record().state());
      first.get(10, TimeUnit.SECONDS);
      releaser.join(10_000);
    }
    try (JdbcJournal reopened = JdbcJournal.dataSource(h2).open()) {
      assertTrue(reopened.find(interrupted.id()).isPresent(), "the begin was answered, so its record is kept");
      assertTrue(reopened.find(other.id()).isPresent());
    }
  }
}
