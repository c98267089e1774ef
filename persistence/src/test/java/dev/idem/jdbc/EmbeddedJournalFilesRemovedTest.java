package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.core.OperationState;
import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.support.Ops;
import dev.idem.storage.EmbeddedFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded journal's files removed, moved or replaced while it is open (a deploy script, a
 * temp-file cleaner): SQLite keeps writing the files it has open, which the next open will not
 * find. No begin may be acknowledged as durable from then on, and the close must not look clean.
 */
class EmbeddedJournalFilesRemovedTest {
  @TempDir
  Path tmp;

  @Test
  void aBeginAfterTheDirectoryWasRemovedIsRefusedAsMayBeJournaledAndEveryLaterCallSaysWhy() throws Exception {
    Path dir = tmp.resolve("journal");
    Ops ops = new Ops(31);
    NewOperation after = ops.newOp("{\"n\":2}");
    JdbcJournal journal = JdbcJournal.openEmbedded(dir);
    journal.begin(ops.newOp("{\"n\":1}"));
    deleteTree(dir);

    JournalException begin = assertThrows(JournalException.class, () -> journal.begin(after));
    String m = begin.getMessage();
    assertTrue(m.contains("files were removed or replaced") && m.contains(dir.resolve(EmbeddedFiles.DATABASE_FILE)
        .toString()), m);
    assertTrue(m.contains("MAY have been journaled, but it is NOT durable") && m.contains("nothing was sent by this call"), m);
    assertFalse(m.contains("nothing was sent: an operation with no durable record"), m);

    // Every later call, read or write, refuses with the same reason (not a plain "reopen it").
    JournalException find = assertThrows(JournalException.class, () -> journal.find(after.id()));
    assertTrue(find.getMessage().contains("files were removed or replaced"), find.getMessage());
    JournalException close = assertThrows(JournalException.class, journal::close);
    assertTrue(close.getMessage().contains("files were removed or replaced"), close.getMessage());
    // The close wrote no marker of its own where the directory was.
    assertFalse(Files.exists(dir), "the close recreated " + dir);
  }

  @Test
  void aCloseAfterTheDirectoryWasRemovedWithNoWriteSinceThrowsInsteadOfClosingCleanly() throws Exception {
    Path dir = tmp.resolve("journal");
    Ops ops = new Ops(32);
    JdbcJournal journal = JdbcJournal.openEmbedded(dir);
    journal.begin(ops.newOp("{\"n\":1}"));
    deleteTree(dir);

    JournalException close = assertThrows(JournalException.class, journal::close);
    assertTrue(close.getMessage().contains("files were removed or replaced")
        && close.getMessage().contains("it is gone"), close.getMessage());
    assertFalse(Files.exists(dir), "the close recreated " + dir);
  }

  @Test
  void aDirectoryMovedAsideAndBackHoldsWhatTheRefusedBeginSaidItMayHold() throws Exception {
    Path dir = tmp.resolve("journal");
    Path aside = tmp.resolve("journal.old");
    Ops ops = new Ops(33);
    NewOperation before = ops.newOp("{\"n\":1}");
    NewOperation after = ops.newOp("{\"n\":2}");
    JdbcJournal journal = JdbcJournal.openEmbedded(dir);
    journal.begin(before);
    Files.move(dir, aside, StandardCopyOption.ATOMIC_MOVE);

    JournalException begin = assertThrows(JournalException.class, () -> journal.begin(after));
    assertTrue(begin.getMessage().contains("MAY have been journaled"), begin.getMessage());
    assertThrows(JournalException.class, journal::close);

    Files.move(aside, dir, StandardCopyOption.ATOMIC_MOVE);
    try (JdbcJournal reopened = JdbcJournal.openEmbedded(dir)) {
      // "MAY": the refused begin's commit is in the moved files, and a resume will send it with its key.
      assertEquals(OperationState.PENDING, reopened.find(before.id()).orElseThrow().state());
      assertEquals(OperationState.PENDING, reopened.find(after.id()).orElseThrow().state());
    }
  }

  @Test
  void aDatabaseFileReplacedByACopyIsNotTheJournalAnyMore() throws Exception {
    Path dir = tmp.resolve("journal");
    Path db = dir.resolve(EmbeddedFiles.DATABASE_FILE);
    Ops ops = new Ops(34);
    JdbcJournal journal = JdbcJournal.openEmbedded(dir);
    journal.begin(ops.newOp("{\"n\":1}"));
    Path copy = tmp.resolve("copy.db");
    Files.copy(db, copy);
    Files.move(copy, db, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);

    JournalException begin = assertThrows(JournalException.class, () -> journal.begin(ops.newOp("{\"n\":2}")));
    assertTrue(begin.getMessage().contains("another file is in its place"), begin.getMessage());
    assertThrows(JournalException.class, journal::close);
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
