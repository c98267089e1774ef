package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (symbolic links): the common deployment /var/lib/app -> /data/app works while /data/app
 * exists. Before the volume is mounted or the target created, the link dangles; the journal says
 * "a file is in the way" of its directory, and an operator looking at /var/lib/app finds no file,
 * only the link. (A link to a database file not created yet is now followed and created; a link
 * to a journal directory not created yet is neither followed nor named.)
 */
class ReviewDanglingJournalDirectoryLinkTest {
  @TempDir
  Path tmp;

  @Test
  void aJournalDirectoryLinkedToADirectoryNotCreatedYetIsNamedAsALink() throws Exception {
    Path target = tmp.resolve("data/app");
    Path link = Files.createSymbolicLink(tmp.resolve("app"), target);

    JournalException e = assertThrows(JournalException.class, () -> JdbcJournal.openEmbedded(link));

    assertFalse(e.getMessage().contains("a file is in the way"), "misleading message: " + e.getMessage());
    assertTrue(e.getMessage().contains(target.toString()),
        "the message should name where the link points (" + target + "): " + e.getMessage());
  }

  /**
   * The target is not created: with the volume not mounted, it would be made on the disk under the
   * mount point, and the journal would start empty there, to be hidden by the volume once mounted.
   * Once the operator creates it (or mounts the volume), the journal opens through the link; a link
   * higher up the path is named the same way, and so is it by the read-only open (the CLI's).
   */
  @Test
  void theTargetIsNotCreatedAndOnceItExistsTheJournalOpensThroughTheLink() throws Exception {
    Path target = tmp.resolve("data/app");
    Path link = Files.createSymbolicLink(tmp.resolve("app"), target);

    assertThrows(JournalException.class, () -> JdbcJournal.openEmbedded(link));
    JournalException below = assertThrows(JournalException.class,
        () -> JdbcJournal.openEmbedded(link.resolve("orders")));
    JournalException readOnly = assertThrows(JournalException.class, () -> JdbcJournal.openReadOnly(link));

    assertFalse(Files.exists(tmp.resolve("data")), "nothing created where the link points");
    assertTrue(below.getMessage().contains(link + ", which is a symbolic link to " + target), below.getMessage());
    assertTrue(readOnly.getMessage().contains(target.toString()), readOnly.getMessage());

    Files.createDirectories(target);
    try (JdbcJournal j = JdbcJournal.openEmbedded(link)) {
      j.begin(new Ops(1).newOp("{}"));
    }
    assertTrue(Files.exists(target.resolve("idem-journal.db")));
    try (JdbcJournal j = JdbcJournal.openReadOnly(link)) {
      long total = 0;
      for (OperationState state : OperationState.values()) {
        total += j.count(state);
      }
      assertEquals(1, total, "the operation begun through the link");
    }
  }
}
