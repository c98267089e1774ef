package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A role without CREATE on the schema opening a journal whose schema does not exist yet: the
 * migration is due and cannot run, and the message names the missing privilege, not files.
 */
@ExtendWith(PostgresExtension.class)
class PostgresRoleWithoutCreateTest {
  @Test
  void aMigrationTheRoleMayNotRunNamesTheMissingPrivilege(PgDatabase db) throws Exception {
    String role = db.name() + "_dml";
    try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE ROLE " + role + " LOGIN");
      st.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
      st.execute("GRANT USAGE ON SCHEMA public TO " + role);
    }
    PGSimpleDataSource app = db.dataSource();
    app.setUser(role);

    JournalException e = assertThrows(JournalException.class, () -> JdbcJournal.dataSource(app).open());

    assertFalse(e.getMessage().contains("files"), e.getMessage());
    assertTrue(e.getMessage().contains("lacks a privilege on schema public"), e.getMessage());
    assertTrue(e.getMessage().contains("CREATE"), e.getMessage());
  }
}
