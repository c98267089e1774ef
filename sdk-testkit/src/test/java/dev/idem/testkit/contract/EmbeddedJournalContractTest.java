package dev.idem.testkit.contract;

import dev.idem.core.spi.Journal;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.JournalTestAccess;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/** The journal contract on embedded SQLite with the default (durable) settings. */
class EmbeddedJournalContractTest extends JournalContract {
  @TempDir
  Path dir;
  private JdbcJournal journal;

  @BeforeEach
  void open() throws Exception {
    journal = JdbcJournal.openEmbedded(dir.resolve("journal"));
  }

  @AfterEach
  void close() throws Exception {
    journal.close();
  }

  @Override
  protected Journal journal() {
    return journal;
  }

  @Override
  protected Journal journalPurgingInBatchesOf(int rows) throws Exception {
    journal.close(); // one process, one open journal per directory
    journal = JournalTestAccess.purgeBatch(JdbcJournal.embedded(dir.resolve("journal")), rows).open();
    return journal;
  }
}
