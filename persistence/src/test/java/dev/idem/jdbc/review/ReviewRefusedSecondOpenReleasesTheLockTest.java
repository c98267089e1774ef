package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.OpenJournalChild;
import dev.idem.jdbc.support.ChildJvm;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * Review (two processes on one journal): the single-owner locks are POSIX record locks
 * ({@code FileChannel.tryLock}, fcntl on Linux), which the kernel drops for the whole process as
 * soon as the process closes any descriptor of the lock file (FileLock's javadoc warns of it).
 * A second open of the same journal in the same JVM (a second Spring context in a test JVM, a
 * retry loop around the open, a second bean) opens the lock file, is refused with "already open
 * in this JVM", and closes its channel ({@code FileLocks.lock}): that close releases the lock the
 * first open still holds. The first journal goes on writing, but another process can now open the
 * same journal, and its crash recovery takes this one's in-flight operations for a dead process's
 * and sends them again.
 */
class ReviewRefusedSecondOpenReleasesTheLockTest {
  @TempDir
  Path tmp;

  /** A journal in an app's SQLite file has one lock: one refused open in this JVM drops it. */
  @Test
  void aRefusedSecondOpenInThisJvmDoesNotLetAnotherProcessOpenTheAppsSqliteJournal() throws Exception {
    Path file = tmp.resolve("app.db");
    try (JdbcJournal j = JdbcJournal.dataSource(sqlite(file)).open()) {
      j.begin(new Ops(3).newOp("{\"n\":1}"));
      JournalException refused = assertThrows(JournalException.class, () -> JdbcJournal.dataSource(sqlite(file)).open());
      assertTrue(refused.getMessage().contains("already open in this JVM"), refused.getMessage());

      ChildJvm.Result other = ChildJvm.run(tmp, OpenDataSourceJournalChild.class, file.toString());

      assertEquals(0, other.exitCode(), "another process opened the journal this JVM still has open: "
          + other.output());
      assertTrue(other.output().contains("open in another process"), other.output());
    }
  }

  /** The embedded journal takes two locks; a refused open of each kind drops both. */
  @Test
  void refusedSecondOpensInThisJvmDoNotLetAnotherProcessOpenTheEmbeddedJournal() throws Exception {
    Path dir = tmp.resolve("journal");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir)) {
      j.begin(new Ops(4).newOp("{\"n\":1}"));
      JournalException refused = assertThrows(JournalException.class, () -> JdbcJournal.openEmbedded(dir));
      assertTrue(refused.getMessage().contains("already open in this JVM"), refused.getMessage());
      JournalException refusedToo = assertThrows(JournalException.class,
          () -> JdbcJournal.dataSource(sqlite(dir.resolve("idem-journal.db"))).open());
      assertTrue(refusedToo.getMessage().contains("already open in this JVM"), refusedToo.getMessage());

      ChildJvm.Result other = ChildJvm.run(tmp, OpenJournalChild.class, dir.toString());

      assertEquals(0, other.exitCode(), "another process opened the journal this JVM still has open: "
          + other.output());
      assertTrue(other.output().contains("open in another process"), other.output());
    }
  }

  private static SQLiteDataSource sqlite(Path file) {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + file);
    return ds;
  }
}
