package dev.idem.jdbc;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link UnpairedSurrogateScopeTest}'s lookups and writes, {@link UnpairedSurrogateReasonTest}'s
 * reasons and {@link UnpairedSurrogateAttemptTest}'s attempts on PostgreSQL, whose driver also
 * sends an unpaired surrogate as '?'. Failed before the fix, as on SQLite.
 */
@ExtendWith(PostgresExtension.class)
class PostgresUnpairedSurrogateTest {
  @Test
  void lookupsAndWritesWithAnUnpairedSurrogateNeverReachAnotherTenantsOperation(PgDatabase db) throws Exception {
    try (JdbcJournal j = JdbcJournal.dataSource(db.dataSource()).open()) {
      UnpairedSurrogateScopeTest.lookupsAndWritesNeverReachTheCollidedOperation(j);
    }
  }

  @Test
  void reasonsAreStoredWithAReplacementCharacterForEachUnpairedSurrogate(PgDatabase db) throws Exception {
    try (JdbcJournal j = JdbcJournal.dataSource(db.dataSource()).open()) {
      UnpairedSurrogateReasonTest.reasonsAreStoredWithAReplacementCharacterForEachUnpairedSurrogate(j);
    }
  }

  @Test
  void anAttemptsTextWithUnpairedSurrogatesReadsBackAsGiven(PgDatabase db) throws Exception {
    try (JdbcJournal j = JdbcJournal.dataSource(db.dataSource()).open()) {
      UnpairedSurrogateAttemptTest.anAttemptsTextWithUnpairedSurrogatesReadsBackAsGiven(j);
    }
  }
}
