package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.jdbc.JdbcJournal;
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
}
