package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (a57e81a6, what the user is told): only begin() explains a {@code LockLostException} in its
 * own words. A FAILED outcome (SYNC) written after the lock file was removed gets the generic
 * unconfirmed-commit explanation: "the database did not confirm the commit of this write [...]
 * find(id) tells which". Both halves are false: SQLite did confirm it (the lock file went), and
 * find(id) cannot tell anything, because the journal now refuses every call. The caller, who must
 * decide whether to alert or refund, is sent to an API that only throws.
 */
class ReviewLockLostTransitionMessageTest {
  @TempDir
  Path tmp;

  @Test
  void aFailedOutcomeAfterTheLockFileWentIsNotExplainedAsAnUnconfirmedCommitThatFindCanSettle() throws Exception {
    Path file = tmp.resolve("app.db");
    NewOperation op = new Ops(2031).newOp("{\"n\":1}");
    org.sqlite.SQLiteDataSource ds = new org.sqlite.SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + file);
    JdbcJournal journal = JdbcJournal.dataSource(ds).open();
    try {
      journal.begin(op);
      Lease lease = journal.claim(op.id(), "n", Ops.T0, Duration.ofMinutes(5)).orElseThrow();
      Files.delete(tmp.resolve("app.db.idem-journal.lock"));

      JournalException failed = assertThrows(JournalException.class, () -> journal.transition(op.id(), lease,
          Transition.finish(OperationState.FAILED, Ops.T0, null, "HTTP 400")));
      String m = failed.getMessage();
      assertTrue(m.contains("lock file"), m);
      // What find(id) does now: it refuses, naming the lock file.
      JournalException find = assertThrows(JournalException.class, () -> journal.find(op.id()));
      assertTrue(find.getMessage().contains("unusable"), find.getMessage());

      assertFalse(m.contains("find(id) tells which"), "the caller is sent to find(id), which only throws now: " + m);
      assertFalse(m.contains("the database did not confirm the commit"),
          "the database did confirm it; the lock file went: " + m);
    } finally {
      assertThrows(JournalException.class, journal::close);
    }
  }
}
