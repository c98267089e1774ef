package dev.idem.jdbc;

import dev.idem.core.Journal;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/** The journal contract on a real, throwaway PostgreSQL. */
@ExtendWith(PostgresExtension.class)
class PostgresJournalContractTest extends JournalContract {
  private JdbcJournal journal;

  @BeforeEach
  void open(PgDatabase db) throws Exception {
    journal = JdbcJournal.dataSource(db.dataSource()).open();
  }

  @AfterEach
  void close() throws Exception {
    journal.close();
  }

  @Override
  Journal journal() {
    return journal;
  }
}
