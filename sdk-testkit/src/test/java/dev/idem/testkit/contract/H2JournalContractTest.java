package dev.idem.testkit.contract;

import dev.idem.core.spi.Journal;
import dev.idem.jdbc.JdbcJournal;
import java.nio.file.Path;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journal contract on an app's own H2 database (accepted, not recommended: see JdbcJournal),
 * so that every query, the due order's among them, is known to run on the third dialect too.
 */
class H2JournalContractTest extends JournalContract {
  @TempDir
  Path dir;
  private JdbcJournal journal;

  @BeforeEach
  void open() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + dir.resolve("j") + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    journal = JdbcJournal.dataSource(h2).open();
  }

  @AfterEach
  void close() throws Exception {
    journal.close();
  }

  @Override
  protected Journal journal() {
    return journal;
  }
}
