package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.storage.LockLostException;
import dev.idem.jdbc.support.ChildJvm;
import dev.idem.jdbc.support.Ops;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * The lock files of an open journal removed (a temp-file cleaner, a deploy script clearing "stale"
 * lock files): the OS lock stays on the unlinked file, and the next open creates and locks a new
 * one, so a second owner gets in, and its crash recovery takes the first one's in-flight
 * operations back. The holder stops at its next commit round, before any caller hears of it.
 */
class EmbeddedJournalLockFileRemovedTest {
  @TempDir
  Path tmp;

  @Test
  void anotherProcessOpensTheJournalOnceItsLockFilesAreRemovedAndTheHolderStopsAtItsNextCommit() throws Exception {
    Path dir = tmp.resolve("journal");
    Ops ops = new Ops(41);
    NewOperation inFlight = ops.newOp("{\"n\":1}");
    NewOperation after = ops.newOp("{\"n\":2}");
    JdbcJournal journal = JdbcJournal.openEmbedded(dir);
    journal.beginAndClaim(inFlight, "parent", Duration.ofMinutes(5));
    assertEquals(2, removeLockFiles(dir));

    // The limit that remains: nothing at the path says that this process still holds the journal,
    // so another process opens it (and its recovery takes this process's lease back).
    ChildJvm.Result other = ChildJvm.run(tmp, OpenJournalChild.class, dir.toString());
    assertEquals(1, other.exitCode(), other.output());
    assertTrue(other.output().contains("OPENED"), other.output());
    OperationRecord seen = journal.find(inFlight.id()).orElseThrow();
    assertFalse(seen.state() == OperationState.IN_FLIGHT && "parent".equals(seen.owner()),
        "the other process's recovery left this process's lease alone: " + seen);

    // The holder's next commit round finds its lock file gone: no caller is told the write is
    // durable, nothing is sent by this call, and the journal refuses every later call.
    JournalException begin = assertThrows(JournalException.class, () -> journal.begin(after));
    String m = begin.getMessage();
    assertTrue(m.contains("lock file") && m.contains("another process may own"), m);
    assertTrue(m.contains(dir.resolve("idem-journal.db.idem-journal.lock").toString()), m);
    assertTrue(m.contains("nothing was sent by this call"), m);
    JournalException find = assertThrows(JournalException.class, () -> journal.find(inFlight.id()));
    assertTrue(find.getMessage().contains("lock file"), find.getMessage());
    JournalException close = assertThrows(JournalException.class, journal::close);
    assertTrue(close.getMessage().contains("lock file"), close.getMessage());
  }

  @Test
  void aSecondOpenInThisJvmIsRefusedAfterTheLockFilesWereRemoved() throws Exception {
    Path dir = tmp.resolve("journal");
    NewOperation inFlight = new Ops(42).newOp("{\"n\":1}");
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      journal.beginAndClaim(inFlight, "first", Duration.ofMinutes(5));
      assertEquals(2, removeLockFiles(dir));

      JournalException refused = assertThrows(JournalException.class, () -> JdbcJournal.openEmbedded(dir));
      assertTrue(refused.getMessage().contains("already open in this JVM"), refused.getMessage());
      JournalException refusedToo = assertThrows(JournalException.class,
          () -> JdbcJournal.dataSource(sqlite(dir.resolve("idem-journal.db"))).open());
      assertTrue(refusedToo.getMessage().contains("already open in this JVM"), refusedToo.getMessage());
      // Refused before the recovery: the first open's lease is as it left it.
      assertEquals("first", journal.find(inFlight.id()).orElseThrow().owner());
    } catch (JournalException expected) {
      // the close says the lock file went; what matters here is the refusal above
      assertTrue(expected.getMessage().contains("lock file"), expected.getMessage());
    }
  }

  @Test
  void aJournalInAnAppsSqliteFileStopsAtItsNextCommitOnceItsLockFileIsRemoved() throws Exception {
    Path file = tmp.resolve("app.db");
    Ops ops = new Ops(43);
    JdbcJournal journal = JdbcJournal.dataSource(sqlite(file)).open();
    journal.begin(ops.newOp("{\"n\":1}"));
    Files.delete(tmp.resolve("app.db.idem-journal.lock"));

    JournalException begin = assertThrows(JournalException.class, () -> journal.begin(ops.newOp("{\"n\":2}")));
    assertTrue(begin.getMessage().contains("lock file") && begin.getMessage().contains("another process may own"),
        begin.getMessage());
    assertThrows(JournalException.class, journal::close);
  }

  /**
   * The close of a journal that lost its lock file takes the lock again to mark its close: here
   * another process holds it, so the open marker (that process's) is left as it is, and that
   * process keeps the journal to itself.
   */
  @Test
  void theCloseLeavesTheOpenMarkerToAnotherProcessThatHoldsTheJournalNow() throws Exception {
    Path dir = tmp.resolve("journal");
    Ops ops = new Ops(44);
    NewOperation first = ops.newOp("{\"n\":1}");
    JdbcJournal journal = JdbcJournal.openEmbedded(dir);
    journal.begin(first);
    assertEquals(2, removeLockFiles(dir));
    try (ChildJvm.Running other = ChildJvm.start("HOLDING", HoldJournalChild.class,
        dir.toString())) {
      other.awaitReady(Duration.ofSeconds(60));
      Path marker = dir.resolve("idem-journal.open");
      assertEquals("open", Files.readString(marker).strip(), "the other process's open marker");

      assertThrows(JournalException.class, () -> journal.begin(ops.newOp("{\"n\":2}")));
      assertThrows(JournalException.class, journal::close);
      assertEquals("open", Files.readString(marker).strip(), "the close marked the other process's marker");
      // The close's attempt to lock again released nothing of the other process's.
      ChildJvm.Result third = ChildJvm.run(tmp, OpenJournalChild.class, dir.toString());
      assertEquals(0, third.exitCode(), third.output());
      assertTrue(third.output().contains("open in another process"), third.output());

      other.terminate(Duration.ofSeconds(60)); // SIGTERM: its shutdown hook closes the journal
    }
    try (JdbcJournal reopened = JdbcJournal.openEmbedded(dir)) {
      assertTrue(reopened.find(first.id()).isPresent());
    }
  }

  /**
   * A claim and an attempt's outcome committed after the lock file went are explained in their own
   * words: the database did confirm them, and find(id) only throws now.
   */
  @Test
  void aClaimAndAnAttemptsOutcomeAfterTheLockFileWentSendNobodyToFind() throws Exception {
    Ops ops = new Ops(45);
    NewOperation retried = ops.newOp("{\"n\":1}");
    JdbcJournal journal = JdbcJournal.dataSource(sqlite(tmp.resolve("app.db"))).open();
    journal.begin(retried);
    Lease first = journal.claim(retried.id(), "n", Ops.T0, Duration.ofMinutes(5)).orElseThrow();
    journal.transition(retried.id(), first, Transition.retryAt(Ops.T0, Ops.T0, "503"));
    journal.begin(ops.newOp("{\"n\":2}")); // durable, with the deferred writes before it
    Files.delete(tmp.resolve("app.db.idem-journal.lock"));

    // Not an inline operation's first claim: durable before it returns, so the round finds the lock file gone.
    LockLostException claim = assertThrows(LockLostException.class,
        () -> journal.claim(retried.id(), "n", Ops.T0, Duration.ofMinutes(5)));
    String m = claim.getMessage();
    assertTrue(m.contains("nothing was sent for this attempt") && m.contains("reopen it in one process only"), m);
    assertFalse(m.contains("did not confirm"), m);
    assertThrows(JournalException.class, journal::close);

    NewOperation sent = ops.newOp("{\"n\":3}");
    JdbcJournal other = JdbcJournal.dataSource(sqlite(tmp.resolve("other.db"))).open();
    other.begin(sent);
    Lease lease = other.claim(sent.id(), "n", Ops.T0, Duration.ofMinutes(5)).orElseThrow();
    Files.delete(tmp.resolve("other.db.idem-journal.lock"));
    LockLostException outcome = assertThrows(LockLostException.class, () -> other.recordAttemptAndTransition(
        sent.id(), lease, new AttemptRecord(1, lease.generation(), Ops.T0, Ops.T0, Classification.AMBIGUOUS, null,
            "java.io.IOException", "reset", Duration.ZERO, "give up"),
        Transition.finish(OperationState.UNCERTAIN, Ops.T0, null, "reset")));
    String o = outcome.getMessage();
    assertTrue(o.contains("the attempt was already sent") && o.contains("reopen it in one process only"), o);
    assertFalse(o.contains("find(id) tells which") || o.contains("did not confirm"), o);
    assertThrows(JournalException.class, other::close);
  }

  private static int removeLockFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> locks = files.filter(f -> f.getFileName().toString().endsWith(".lock")).toList();
      for (Path lock : locks) {
        Files.delete(lock);
      }
      return locks.size();
    }
  }

  private static SQLiteDataSource sqlite(Path file) {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + file);
    return ds;
  }
}
