package dev.idem.testkit.contract;

import dev.idem.core.spi.Journal;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.JournalTestAccess;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/** The journal contract on a real, throwaway PostgreSQL. */
@ExtendWith(PostgresExtension.class)
class PostgresJournalContractTest extends JournalContract {
  private JdbcJournal journal;
  private JdbcJournal batched;
  private PgDatabase db;

  @BeforeEach
  void open(PgDatabase db) throws Exception {
    this.db = db;
    journal = JdbcJournal.dataSource(db.dataSource()).open();
  }

  @AfterEach
  void close() throws Exception {
    journal.close();
    if (batched != null) {
      batched.close();
    }
  }

  @Override
  protected Journal journalPurgingInBatchesOf(int rows) throws Exception {
    batched = JournalTestAccess.purgeBatch(JdbcJournal.dataSource(db.dataSource()), rows).open(); // a second process, in effect
    return batched;
  }

  @Override
  protected Journal journal() {
    return journal;
  }
}
