package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.JournalException;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (symbolic links): what an operator reads when a journal is reached through a link the
 * journal refuses or cannot follow.
 */
class ReviewSymlinkMessagesTest {
  @TempDir
  Path tmp;

  /**
   * A journal directory whose {@code idem-journal.db} links elsewhere is refused by the app's open
   * with the reason and the fix. The read-only open (what {@code idem journal list/stats} use)
   * refuses it too, but StoreOpener catches the JournalException as an IOException (JournalException
   * extends IOException) and wraps it: the operator reads "cannot resolve the real path of ...:
   * dev.idem.core.JournalException: ...", a failure to resolve that did not happen, with a Java
   * class name in the middle of the line.
   */
  @Test
  void aReadOnlyOpenOfALinkedDatabaseFileSaysWhyAsTheAppsOpenDoes() throws Exception {
    Path real = tmp.resolve("real");
    try (JdbcJournal j = JdbcJournal.openEmbedded(real)) {
      j.begin(new Ops(1).newOp("{}"));
    }
    Path linked = Files.createDirectories(tmp.resolve("linked"));
    Files.createSymbolicLink(linked.resolve("idem-journal.db"), real.resolve("idem-journal.db"));

    JournalException app = assertThrows(JournalException.class, () -> JdbcJournal.openEmbedded(linked));
    JournalException readOnly = assertThrows(JournalException.class, () -> JdbcJournal.openReadOnly(linked));

    assertFalse(readOnly.getMessage().contains("JournalException"),
        "the read-only open's message names a Java class: " + readOnly.getMessage());
    assertEquals(app.getMessage(), readOnly.getMessage(),
        "the read-only open should give the reason and the fix as the app's open does");
  }
}
